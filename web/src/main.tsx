import { render } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { ComponentType } from 'preact';
import './styles.css';
import { api } from './api';
import { navigate, useLocation } from './router';
import { Link } from './ui';
import { Login } from './pages/login';
import { Messages } from './pages/messages';
import { MessageDetail } from './pages/message-detail';
import { Webhooks } from './pages/webhooks';
import { Domains } from './pages/domains';
import { Settings } from './pages/settings';
import { SmsSettings } from './pages/sms-settings';
import { ApiKeys } from './pages/api-keys';
import { Suppressions } from './pages/suppressions';
import { Contacts } from './pages/contacts';
import { Templates } from './pages/templates';
import { Campaigns } from './pages/campaigns';
import { Sandbox } from './pages/sandbox';
import { Audit } from './pages/audit';

/**
 * Every signed-in page: its path, its place in the navigation, and what renders it. A new page is
 * one entry here and one path in src/http/dashboard.ts.
 */
const PAGES: { path: RegExp; nav?: { href: string; label: string }; page: ComponentType<{ params: string[] }> }[] = [
  { path: /^\/messages$/, nav: { href: '/messages', label: 'Messages' }, page: Messages },
  { path: /^\/messages\/([^/]+)$/, page: MessageDetail },
  { path: /^\/templates$/, nav: { href: '/templates', label: 'Templates' }, page: Templates },
  { path: /^\/campaigns$/, nav: { href: '/campaigns', label: 'Campaigns' }, page: Campaigns },
  { path: /^\/contacts$/, nav: { href: '/contacts', label: 'Contacts' }, page: Contacts },
  { path: /^\/suppressions$/, nav: { href: '/suppressions', label: 'Suppressions' }, page: Suppressions },
  { path: /^\/domains$/, nav: { href: '/domains', label: 'Domains' }, page: Domains },
  { path: /^\/webhooks$/, nav: { href: '/webhooks', label: 'Webhooks' }, page: Webhooks },
  { path: /^\/api-keys$/, nav: { href: '/api-keys', label: 'API keys' }, page: ApiKeys },
  { path: /^\/sandbox$/, nav: { href: '/sandbox', label: 'Sandbox' }, page: Sandbox },
  { path: /^\/settings$/, nav: { href: '/settings', label: 'Settings' }, page: Settings },
  { path: /^\/settings\/sms$/, nav: { href: '/settings/sms', label: 'SMS settings' }, page: SmsSettings },
  { path: /^\/audit$/, nav: { href: '/audit', label: 'Audit' }, page: Audit },
];

async function signOut() {
  // Signed out in any case: the login page follows even if the server could not be told.
  await api.DELETE('/api/auth/session').catch(() => undefined);
  navigate('/login');
}

/** After moving to another page, focus its heading, so keyboard and screen-reader users start there. */
function useFocusOnNavigation(path: string) {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [path]);
}

function Shell() {
  const { path } = useLocation();
  useFocusOnNavigation(path);
  if (path === '/login') return <Login />;
  const match = PAGES.map((p) => ({ p, m: path.match(p.path) })).find((x) => x.m);
  const Page = match?.p.page;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Courier Ledger</span>
        <nav aria-label="Main">
          <ul>
            {PAGES.filter((p) => p.nav).map(({ nav }) => (
              <li key={nav!.href}>
                <Link href={nav!.href} aria-current={path === nav!.href || (nav!.href === '/messages' && path.startsWith('/messages/')) ? 'page' : undefined}>
                  {nav!.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main">{Page ? <Page key={path} params={match!.m!.slice(1)} /> : <p>No such page.</p>}</main>
    </>
  );
}

render(<Shell />, document.getElementById('app')!);
