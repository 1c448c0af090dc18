import { useState } from 'preact/hooks';

function CopyBlock({ label, text }: { label: string; text: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch {
      // No clipboard (plain http on another host): the text stays selectable.
    }
  };
  return (
    <div class="copy-block">
      <div class="copy-head">
        <span>{label}</span>
        <button type="button" class="secondary small" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <pre>
        <code>{text}</code>
      </pre>
    </div>
  );
}

/** Everything an app needs to talk to this server: where, with what key, and two ways in. */
export function ConnectPanel() {
  const base = window.location.origin;
  const mcp = `claude mcp add --transport http mnemo ${base}/mcp --header "Authorization: Bearer $MNEMO_API_KEY"`;
  const sdk = `// npm install @mnemo/client
import { MemoryClient } from '@mnemo/client';

const mnemo = new MemoryClient({
  baseUrl: '${base}',
  apiKey: process.env.MNEMO_API_KEY,
});
await mnemo.memories.add({ text: 'Jane is allergic to peanuts', ownerId: 'jane' });
const { results } = await mnemo.search.query({ query: 'allergies', ownerId: 'jane' });`;
  return (
    <section class="card connect" aria-labelledby="connect-title">
      <h2 id="connect-title">Connect your app</h2>
      <ol class="steps">
        <li>
          <strong>Base URL</strong> <code data-testid="base-url">{base}</code>
        </li>
        <li>
          <strong>An API key</strong>: create one on the <a href="#/keys">API keys</a> page and keep
          it in <code>MNEMO_API_KEY</code>. It is shown once; revoke it there if it leaks.
        </li>
      </ol>
      <CopyBlock label="MCP (Claude Code, one line)" text={mcp} />
      <CopyBlock label="TypeScript SDK" text={sdk} />
      <p class="muted small">
        Any HTTP client works too: <code>Authorization: Bearer $MNEMO_API_KEY</code> on{' '}
        <code>{base}/v1/…</code>; the API is described at{' '}
        <a href="/v1/openapi.json">/v1/openapi.json</a>.
      </p>
    </section>
  );
}
