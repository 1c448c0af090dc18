import type { OverviewStats } from '@mnemo/contract';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, identityToken, signIn } from './api.js';
import { ApiKeys } from './pages/keys.js';
import { Memories } from './pages/memories.js';
import { Overview } from './pages/overview.js';
import { SearchPlayground } from './pages/search.js';
import { SignIn } from './pages/signin.js';
import { Usage } from './pages/usage.js';
import { Webhooks } from './pages/webhooks.js';
import { Workspaces } from './pages/workspaces.js';
import './styles.css';

const PAGES = [
  ['overview', 'Overview'],
  ['workspaces', 'Workspaces'],
  ['keys', 'API keys'],
  ['usage', 'Usage'],
  ['memories', 'Memories'],
  ['search', 'Search'],
  ['webhooks', 'Webhooks'],
] as const;
type PageId = (typeof PAGES)[number][0];

const pageOf = (hash: string): PageId =>
  PAGES.find(([id]) => `#/${id}` === hash)?.[0] ?? 'overview';

/** A sign-in link puts the token in the fragment (never sent to servers or logs): take it out. */
function takeLinkToken(): string | null {
  const match = /^#token=([\w.-]+)$/.exec(window.location.hash);
  if (!match?.[1]) return null;
  history.replaceState(null, '', `${window.location.pathname}#/overview`);
  return match[1];
}

function App() {
  const [stats, setStats] = useState<OverviewStats | null>(null);
  const [state, setState] = useState<'loading' | 'signed-out' | 'ready'>('loading');
  const [page, setPage] = useState<PageId>(pageOf(window.location.hash));
  const [signInError, setSignInError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);

  const refresh = async () => {
    const res = await api.dashboard.getOverviewStats();
    if (res.status === 200) {
      setStats(res.body.data);
      setState('ready');
    } else {
      setStats(null);
      setState('signed-out');
    }
  };

  /** A sign-in link opened on a page already showing the console is a hash change only. */
  const followLink = async () => {
    const token = takeLinkToken();
    if (!token) return false;
    setState('loading');
    const failure = await signIn(token);
    setSignInError(failure ? `The sign-in link did not work (${failure}).` : null);
    await refresh();
    return true;
  };

  useEffect(() => {
    const onHash = () => {
      void followLink();
      setPage(pageOf(window.location.hash));
    };
    window.addEventListener('hashchange', onHash);
    void followLink().then((followed) => (followed ? undefined : refresh()));
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  // Focus the page heading on navigation, so keyboard and screen-reader users land on it.
  useEffect(() => {
    document.getElementById('page-title')?.focus();
  }, [page, state]);

  const logout = async () => {
    await api.dashboard.logoutDashboard();
    identityToken.clear();
    setState('signed-out');
  };

  if (state === 'loading') return <p class="muted center">Loading…</p>;
  if (state === 'signed-out' || !stats) {
    return <SignIn initialError={signInError} onSignedIn={() => void refresh()} />;
  }
  const switched = () => {
    setVersion(version + 1);
    void refresh();
  };
  return (
    <div class="layout">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Mnemo</span>
        <span class="workspace" data-testid="current-workspace">
          {stats.workspace.name}
        </span>
        <button type="button" class="secondary" onClick={() => void logout()}>
          Sign out
        </button>
      </header>
      <nav aria-label="Console">
        <ul>
          {PAGES.map(([id, label]) => (
            <li key={id}>
              <a href={`#/${id}`} aria-current={page === id ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" key={`${stats.workspace.id}:${version}`}>
        {page === 'overview' ? <Overview stats={stats} /> : null}
        {page === 'workspaces' ? <Workspaces onSwitched={switched} /> : null}
        {page === 'keys' ? <ApiKeys workspaceId={stats.workspace.id} /> : null}
        {page === 'usage' ? <Usage /> : null}
        {page === 'memories' ? <Memories /> : null}
        {page === 'search' ? <SearchPlayground /> : null}
        {page === 'webhooks' ? <Webhooks /> : null}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
