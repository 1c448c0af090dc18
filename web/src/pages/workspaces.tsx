import type { DashboardWorkspace } from '@mnemo/contract';
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, identityToken, signIn } from '../api.js';
import { ErrorNote, Field, formatTime, Page } from '../ui.js';

export function Workspaces({ onSwitched }: { onSwitched: () => void }) {
  const [rows, setRows] = useState<DashboardWorkspace[]>([]);
  const [current, setCurrent] = useState('');
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);

  const load = async () => {
    const res = await api.dashboard.listDashboardWorkspaces();
    if (res.status !== 200) return setError(errorMessage(res));
    setRows(res.body.data.workspaces);
    setCurrent(res.body.data.current_workspace_id);
  };
  useEffect(() => void load(), []);

  const create = async (event: Event) => {
    event.preventDefault();
    const res = await api.dashboard.createDashboardWorkspace({ body: { name: name.trim() } });
    if (res.status !== 200) return setError(errorMessage(res));
    setName('');
    setError(null);
    await load();
  };

  const switchTo = async (id: string) => {
    const token = identityToken.get();
    if (!token) return setError('Sign in again to switch workspace (the token is kept per tab).');
    const failure = await signIn(token, id);
    if (failure) return setError(`${failure}. Sign in again to switch workspace.`);
    onSwitched();
  };

  return (
    <Page title="Workspaces">
      <table>
        <caption class="sr-only">Your workspaces</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id}>
              <td>
                {row.name} <code class="muted">{row.id.slice(0, 8)}</code>
              </td>
              <td>{row.role}</td>
              <td>{formatTime(row.created_at)}</td>
              <td>
                {row.id === current ? (
                  <span class="badge">Current</span>
                ) : (
                  <button type="button" class="secondary" onClick={() => void switchTo(row.id)}>
                    Switch to {row.name}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form class="card inline" onSubmit={create}>
        <Field label="New workspace name">
          <input
            name="workspace_name"
            required
            maxLength={100}
            value={name}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </Field>
        <button type="submit" disabled={name.trim() === ''}>
          Create workspace
        </button>
      </form>
      <ErrorNote message={error} />
    </Page>
  );
}
