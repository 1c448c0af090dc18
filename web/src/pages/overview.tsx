import type { OverviewStats } from '@mnemo/contract';
import { formatTime, Page } from '../ui.js';

export function Overview({ stats }: { stats: OverviewStats }) {
  const cards: Array<[string, number | string]> = [
    ['Memories', stats.memories.total],
    ['Active', stats.memories.active],
    ['Replaced', stats.memories.replaced],
    ['Archived', stats.memories.archived],
    ['Active API keys', stats.api_keys.active],
    ['Requests (24 h)', stats.requests_24h],
  ];
  return (
    <Page title={`Overview · ${stats.workspace.name}`}>
      <p>
        Plan <strong>{stats.workspace.plan}</strong> · signed in as <strong>{stats.user.id}</strong>{' '}
        · session until {formatTime(stats.session_expires_at)}
      </p>
      <ul class="stats">
        {cards.map(([label, value]) => (
          <li key={label} class="card">
            <span class="stat-value">{value}</span>
            <span class="stat-label">{label}</span>
          </li>
        ))}
      </ul>
    </Page>
  );
}
