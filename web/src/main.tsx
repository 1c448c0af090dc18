import type { OverviewStats } from '@mnemo/contract';
import { render, type ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, identityToken, signIn, whenSessionLost } from './api.js';
import { ApiKeys } from './pages/keys.js';
import { Memories } from './pages/memories.js';
import { Overview } from './pages/overview.js';
import { SearchPlayground } from './pages/search.js';
import { SignIn } from './pages/signin.js';
import { Usage } from './pages/usage.js';
import { Webhooks } from './pages/webhooks.js';
import { Workspaces } from './pages/workspaces.js';
import './styles.css';

interface PageContext {
  stats: OverviewStats;
  /** What follows the page id in the hash (`#/memories/<id>` → the id). */
  param: string | undefined;
  /** The hash's query (`#/memories?owner=asha`). */
  query: URLSearchParams;
  onSwitched: () => void;
}

/** The console's pages, in navigation order: a new page is one entry here. */
const PAGES: Array<{ id: string; label: string; render: (ctx: PageContext) => ComponentChildren }> =
  [
    { id: 'overview', label: 'Overview', render: ({ stats }) => <Overview stats={stats} /> },
    { id: 'usage', label: 'Usage', render: () => <Usage /> },
    {
      id: 'memories',
      label: 'Memories',
      render: ({ param, query }) => (
        <Memories openId={param} owner={query.get('owner') ?? undefined} />
      ),
    },
    { id: 'search', label: 'Search', render: () => <SearchPlayground /> },
    { id: 'webhooks', label: 'Webhooks', render: () => <Webhooks /> },
    {
      id: 'keys',
      label: 'API keys',
      render: ({ stats }) => <ApiKeys workspaceId={stats.workspace.id} />,
    },
    {
      id: 'workspaces',
      label: 'Workspaces',
      render: ({ onSwitched }) => <Workspaces onSwitched={onSwitched} />,
    },
  ];

interface Route {
  id: string;
  param: string | undefined;
  query: URLSearchParams;
}

function routeOf(hash: string): Route {
  const [, id, param, query] = /^#\/([\w-]+)(?:\/([\w-]+))?(?:\?(.*))?$/.exec(hash) ?? [];
  const page = PAGES.find((p) => p.id === id);
  return page
    ? { id: page.id, param, query: new URLSearchParams(query ?? '') }
    : { id: 'overview', param: undefined, query: new URLSearchParams() };
}

/** A sign-in link puts the token in the fragment (never sent to servers or logs): take it out. */
function takeLinkToken(): string | null {
  const match = /^#token=([^&\s]*)$/.exec(window.location.hash);
  if (!match) return null;
  history.replaceState(null, '', `${window.location.pathname}#/overview`);
  return match[1] ?? '';
}

type State = 'loading' | 'signed-out' | 'ready' | 'unreachable';

function App() {
  const [stats, setStats] = useState<OverviewStats | null>(null);
  const [state, setState] = useState<State>('loading');
  const [route, setRoute] = useState<Route>(routeOf(window.location.hash));
  const [signInNote, setSignInNote] = useState<string | null>(null);
  const [sessionEnded, setSessionEnded] = useState(false);
  const [version, setVersion] = useState(0);
  const [menuOpen, setMenuOpen] = useState(false);
  // Read by the 401 listener, which is registered once: only a signed-in console can lose its session.
  const signedIn = useRef(false);
  signedIn.current = state === 'ready';

  const refresh = async () => {
    const res = await api.dashboard.getOverviewStats();
    if (res.status === 200) {
      setStats(res.body.data);
      setSessionEnded(false);
      setState('ready');
    } else if (res.status === 401 || res.status === 403) {
      setStats(null);
      setState('signed-out');
    } else {
      setState('unreachable');
    }
  };

  /** A sign-in link opened on a page already showing the console is a hash change only. */
  const followLink = async () => {
    const token = takeLinkToken();
    if (token === null) return false;
    setState('loading');
    const failure = token
      ? await signIn(token)
      : 'This sign-in link is incomplete: copy the whole link.';
    setSignInNote(failure);
    await refresh();
    return true;
  };

  useEffect(() => {
    // Any call answered 401 (the session expired or was closed elsewhere): back to sign-in.
    whenSessionLost(() => {
      if (!signedIn.current) return;
      signedIn.current = false;
      setStats(null);
      setSessionEnded(true);
      setState('signed-out');
    });
    const onHash = () => {
      void followLink();
      setRoute(routeOf(window.location.hash));
      setMenuOpen(false);
    };
    window.addEventListener('hashchange', onHash);
    void followLink().then((followed) => (followed ? undefined : refresh()));
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  // Focus the page heading on navigation, so keyboard and screen-reader users land on it.
  useEffect(() => {
    document.getElementById('page-title')?.focus();
  }, [route.id, state]);

  const logout = async () => {
    await api.dashboard.logoutDashboard();
    identityToken.clear();
    setSignInNote(null);
    setState('signed-out');
  };

  if (state === 'loading') return <p class="muted center">Loading the console…</p>;
  if (state === 'unreachable') {
    return (
      <div class="signin">
        <p class="note error" role="alert">
          The console cannot reach the Mnemo server right now. Check that it is running, then{' '}
          <button type="button" class="link" onClick={() => void refresh()}>
            try again
          </button>
          .
        </p>
      </div>
    );
  }
  if (state === 'signed-out' || !stats) {
    return (
      <SignIn
        initialError={signInNote}
        notice={sessionEnded ? 'Your session has ended. Sign in again to continue.' : null}
        onSignedIn={() => {
          setSignInNote(null);
          setSessionEnded(false);
          void refresh();
        }}
      />
    );
  }
  const page = PAGES.find((p) => p.id === route.id) ?? PAGES[0]!;
  const switched = () => {
    setVersion(version + 1);
    void refresh();
  };
  return (
    <div class={`layout${menuOpen ? ' menu-open' : ''}`}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <button
          type="button"
          class="menu-button"
          aria-expanded={menuOpen}
          aria-controls="console-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          <span aria-hidden="true">☰</span> Menu
        </button>
        <span class="brand">Mnemo</span>
        <span class="workspace" data-testid="current-workspace">
          {stats.workspace.name}
        </span>
        <button type="button" class="secondary on-dark" onClick={() => void logout()}>
          Sign out
        </button>
      </header>
      <nav id="console-nav" aria-label="Console">
        <ul>
          {PAGES.map(({ id, label }) => (
            <li key={id}>
              <a href={`#/${id}`} aria-current={route.id === id ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" key={`${stats.workspace.id}:${version}`}>
        {page.render({ stats, param: route.param, query: route.query, onSwitched: switched })}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
