import type { DashboardApiKey } from '@mnemo/contract';
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage } from '../api.js';
import { ErrorNote, Field, formatTime, Page } from '../ui.js';

export function ApiKeys({ workspaceId }: { workspaceId: string }) {
  const [rows, setRows] = useState<DashboardApiKey[]>([]);
  const [name, setName] = useState('');
  const [minted, setMinted] = useState<{ name: string; key: string } | null>(null);
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = async () => {
    const res = await api.dashboard.listDashboardApiKeys({ query: {} });
    if (res.status !== 200) return setError(errorMessage(res));
    setRows(res.body.data.api_keys);
  };
  useEffect(() => void load(), [workspaceId]);

  const create = async (event: Event) => {
    event.preventDefault();
    const res = await api.dashboard.createDashboardApiKey({
      body: { workspace_id: workspaceId, name: name.trim() },
    });
    if (res.status !== 200) return setError(errorMessage(res));
    setMinted({ name: res.body.data.api_key.name, key: res.body.data.key });
    setCopied(false);
    setName('');
    setError(null);
    await load();
  };

  const revoke = async (row: DashboardApiKey) => {
    if (!window.confirm(`Revoke the key “${row.name}”? Clients using it stop working at once.`)) {
      return;
    }
    const res = await api.dashboard.revokeDashboardApiKey({ body: { api_key_id: row.id } });
    if (res.status !== 200) return setError(errorMessage(res));
    await load();
  };

  const copy = async () => {
    if (!minted) return;
    try {
      await navigator.clipboard.writeText(minted.key);
      setCopied(true);
    } catch {
      setError('Copy failed: select the key and copy it by hand.');
    }
  };

  return (
    <Page title="API keys">
      <form class="card inline" onSubmit={create}>
        <Field label="Key name" hint="For example the app or environment that will use it">
          <input
            name="key_name"
            required
            maxLength={100}
            value={name}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </Field>
        <button type="submit" disabled={name.trim() === ''}>
          Create key
        </button>
      </form>
      {minted ? (
        <div class="card minted" role="status">
          <p>
            <strong>Key “{minted.name}” created.</strong> Copy it now: it is shown only once.
          </p>
          <div class="copy-row">
            <code id="minted-key" data-testid="minted-key">
              {minted.key}
            </code>
            <button type="button" onClick={() => void copy()}>
              {copied ? 'Copied' : 'Copy key'}
            </button>
            <button type="button" class="secondary" onClick={() => setMinted(null)}>
              Done
            </button>
          </div>
        </div>
      ) : null}
      <ErrorNote message={error} />
      <table>
        <caption class="sr-only">API keys of this workspace</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id}>
              <td>{row.name}</td>
              <td>
                <code>{row.key_prefix}…</code>
              </td>
              <td>{formatTime(row.created_at)}</td>
              <td>{formatTime(row.last_used_at)}</td>
              <td>
                {row.revoked_at ? (
                  <span class="badge revoked">Revoked</span>
                ) : (
                  <span class="badge ok">Active</span>
                )}
              </td>
              <td>
                {row.revoked_at ? null : (
                  <button type="button" class="danger" onClick={() => void revoke(row)}>
                    Revoke {row.name}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length === 0 ? <p class="muted">No keys yet.</p> : null}
    </Page>
  );
}
