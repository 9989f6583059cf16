import { api, call } from '../api';
import type { paths } from '../schema';
import { useLoad } from '../ui';

type Readiness = paths['/api/settings/providers']['get']['responses'][200]['content']['application/json'];

/** Whether this server can call each provider (credentials), read once per page. */
export function useProviderReadiness(): Readiness | undefined {
  return useLoad(() => call<Readiness>(api.GET('/api/settings/providers')), []).data;
}

/** A provider this server cannot call, said before anything is sent through it. */
export function ProviderWarning({ problem, what }: { problem: string | null | undefined; what: string }) {
  if (!problem) return null;
  return (
    <p class="warning" role="note">
      {what} will fail: {problem}.
    </p>
  );
}
