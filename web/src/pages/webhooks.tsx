import {
  WEBHOOK_EVENT_TYPES,
  type WebhookDelivery,
  type WebhookDeliveryPage,
  type WebhookEndpoint,
  type WebhookEventType,
} from '@mnemo/contract';
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage } from '../api.js';
import { ErrorNote, Field, formatTime, Page } from '../ui.js';

const DELIVERY_PAGE_SIZE = 20;

const eventsLabel = (types: readonly string[]) =>
  types.length === 0 ? 'All events' : types.join(', ');

/** Webhook endpoints of the workspace, their signing secrets (shown once) and delivery log. */
export function Webhooks() {
  const [endpoints, setEndpoints] = useState<WebhookEndpoint[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<WebhookEventType[]>([]);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const [copied, setCopied] = useState(false);
  const [selected, setSelected] = useState<WebhookEndpoint | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = async () => {
    const res = await api.webhooks.listWebhookEndpoints();
    setLoaded(true);
    if (res.status !== 200) return setError(errorMessage(res));
    setEndpoints(res.body.results);
  };
  useEffect(() => void load(), []);

  const toggleType = (type: WebhookEventType) =>
    setTypes(types.includes(type) ? types.filter((t) => t !== type) : [...types, type]);

  const create = async (event: Event) => {
    event.preventDefault();
    const res = await api.webhooks.createWebhookEndpoint({
      body: {
        url: url.trim(),
        event_types: types,
        ...(description.trim() ? { description: description.trim() } : {}),
      },
    });
    if (res.status !== 201) return setError(errorMessage(res));
    setSecret({ url: res.body.endpoint.url, secret: res.body.secret });
    setCopied(false);
    setUrl('');
    setDescription('');
    setTypes([]);
    setError(null);
    await load();
  };

  const setEnabled = async (endpoint: WebhookEndpoint, enabled: boolean) => {
    const res = await api.webhooks.updateWebhookEndpoint({
      params: { id: endpoint.id },
      body: { enabled },
    });
    if (res.status !== 200) return setError(errorMessage(res));
    await load();
  };

  const rotate = async (endpoint: WebhookEndpoint) => {
    if (
      !window.confirm(
        `New signing secret for ${endpoint.url}? The old one signs for 24 more hours.`,
      )
    ) {
      return;
    }
    const res = await api.webhooks.rotateWebhookSecret({ params: { id: endpoint.id } });
    if (res.status !== 200) return setError(errorMessage(res));
    setSecret({ url: endpoint.url, secret: res.body.secret });
    setCopied(false);
  };

  const copySecret = async () => {
    if (!secret) return;
    try {
      await navigator.clipboard.writeText(secret.secret);
      setCopied(true);
    } catch {
      setError('Copy failed: select the secret and copy it by hand.');
    }
  };

  const remove = async (endpoint: WebhookEndpoint) => {
    if (!window.confirm(`Delete the endpoint ${endpoint.url} and its delivery log?`)) return;
    const res = await api.webhooks.deleteWebhookEndpoint({
      params: { id: endpoint.id },
    });
    if (res.status !== 200) return setError(errorMessage(res));
    if (selected?.id === endpoint.id) setSelected(null);
    await load();
  };

  return (
    <Page title="Webhooks">
      <p class="muted">
        Signed HTTP calls to your app when memories are created, deduplicated, superseded, merged,
        expired, archived or deleted, and when feedback arrives. See docs/webhooks.md to verify a
        signature.
      </p>
      <form class="card" onSubmit={create} aria-label="Add an endpoint">
        <div class="form-row webhook-fields">
          <Field label="Endpoint URL" hint="http or https; must reach a public address">
            <input
              name="webhook_url"
              type="url"
              required
              maxLength={2048}
              placeholder="https://example.com/mnemo-hook"
              value={url}
              onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
            />
          </Field>
          <Field label="Description" hint="Optional: what this endpoint is for">
            <input
              name="webhook_description"
              maxLength={500}
              value={description}
              onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
            />
          </Field>
        </div>
        <fieldset class="event-types">
          <legend>Events (none ticked: all of them)</legend>
          {WEBHOOK_EVENT_TYPES.map((type) => (
            <label key={type} class="check">
              <input
                type="checkbox"
                checked={types.includes(type)}
                onChange={() => toggleType(type)}
              />{' '}
              {type}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={url.trim() === ''}>
          Add endpoint
        </button>
      </form>
      {secret ? (
        <div class="card minted" role="status">
          <p>
            <strong>Signing secret for {secret.url}.</strong> Copy it now: it is shown only once.
          </p>
          <div class="copy-row">
            <code data-testid="webhook-secret">{secret.secret}</code>
            <button type="button" onClick={() => void copySecret()}>
              {copied ? 'Copied' : 'Copy secret'}
            </button>
            <button type="button" class="secondary" onClick={() => setSecret(null)}>
              Done
            </button>
          </div>
        </div>
      ) : null}
      <ErrorNote message={error} />
      {loaded && endpoints.length === 0 ? (
        <p class="muted">No endpoints yet: add one above to start receiving events.</p>
      ) : (
        <table class="rows-on-phone">
          <caption class="sr-only">Webhook endpoints of this workspace</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {endpoints.map((endpoint) => (
              <tr key={endpoint.id}>
                <td class="endpoint-url" data-label="URL">
                  <div>
                    <code>{endpoint.url}</code>
                    {endpoint.description ? <div class="muted">{endpoint.description}</div> : null}
                  </div>
                </td>
                <td data-label="Events">{eventsLabel(endpoint.event_types)}</td>
                <td data-label="Status">
                  {endpoint.enabled ? (
                    <span class="badge ok">Active</span>
                  ) : (
                    <span class="badge revoked">Paused</span>
                  )}
                </td>
                <td>
                  <div class="actions wrap">
                    <button type="button" class="secondary" onClick={() => setSelected(endpoint)}>
                      Deliveries
                    </button>
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => void setEnabled(endpoint, !endpoint.enabled)}
                    >
                      {endpoint.enabled ? 'Pause' : 'Resume'}
                    </button>
                    <button type="button" class="secondary" onClick={() => void rotate(endpoint)}>
                      Rotate secret
                    </button>
                    <button type="button" class="danger" onClick={() => void remove(endpoint)}>
                      Delete
                    </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {selected ? <Deliveries key={selected.id} endpoint={selected} /> : null}
    </Page>
  );
}

function Deliveries({ endpoint }: { endpoint: WebhookEndpoint }) {
  const [page, setPage] = useState(1);
  const [data, setData] = useState<WebhookDeliveryPage | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = async (target = page) => {
    const res = await api.webhooks.listWebhookDeliveries({
      params: { id: endpoint.id },
      query: { page: target, page_size: DELIVERY_PAGE_SIZE },
    });
    if (res.status !== 200) return setError(errorMessage(res));
    setData(res.body);
    setError(null);
  };
  useEffect(() => void load(page), [page]);

  const replay = async (delivery: WebhookDelivery) => {
    const res = await api.webhooks.replayWebhookDelivery({
      params: { id: endpoint.id, delivery_id: delivery.id },
    });
    if (res.status !== 200) return setError(errorMessage(res));
    await load();
  };

  return (
    <div class="card">
      <div class="detail-head">
        <h2 class="endpoint-url">
          Deliveries to <code>{endpoint.url}</code>
        </h2>
        <button type="button" class="secondary" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <ErrorNote message={error} />
      {data && data.results.length === 0 ? (
        <p class="muted">Nothing delivered yet: events appear here a moment after they happen.</p>
      ) : null}
      {data && data.results.length > 0 ? (
        <table class="rows-on-phone">
          <caption class="sr-only">Delivery log, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Response</th>
              <th scope="col">Next attempt</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {data.results.map((delivery) => (
              <tr key={delivery.id}>
                <td data-label="Time">{formatTime(delivery.created_at)}</td>
                <td data-label="Event">{delivery.event_type}</td>
                <td data-label="Status">
                  <span class={`badge ${delivery.status === 'failed' ? 'revoked' : 'ok'}`}>
                    {delivery.status}
                  </span>
                </td>
                <td data-label="Attempts">{delivery.attempts}</td>
                <td data-label="Response">
                  {delivery.response_status ?? delivery.last_error ?? '—'}
                </td>
                <td data-label="Next attempt">{formatTime(delivery.next_attempt_at)}</td>
                <td>
                  {delivery.status === 'succeeded' || delivery.status === 'failed' ? (
                    <button type="button" class="secondary" onClick={() => void replay(delivery)}>
                      Replay
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {data ? (
        <div class="pager">
          <button
            type="button"
            class="secondary"
            disabled={page <= 1}
            onClick={() => setPage(page - 1)}
          >
            Newer
          </button>
          <span class="muted">
            Page {data.page} of {Math.max(1, Math.ceil(data.total / DELIVERY_PAGE_SIZE))}
          </span>
          <button
            type="button"
            class="secondary"
            disabled={!data.has_more}
            onClick={() => setPage(page + 1)}
          >
            Older
          </button>
        </div>
      ) : null}
    </div>
  );
}
