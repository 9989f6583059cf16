// The first module of the `all` role's workers thread. Node 20 runs a worker thread without the
// loader hooks its process started with, so the TypeScript loader is registered here, for this thread.
import { register } from 'tsx/esm/api';

register();
await import('./workers-thread-main.ts');
