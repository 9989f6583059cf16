import { defineConfig } from 'vite';

// The dashboard is served by the API process (src/http/dashboard.ts) from web/dist.
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, assetsInlineLimit: 0, sourcemap: false, target: 'es2022' },
  resolve: { alias: { react: 'preact/compat', 'react-dom': 'preact/compat' } },
});
