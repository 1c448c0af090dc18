import { WebhookDispatcher, type DispatcherDeps } from '../services/webhooks/dispatcher.js';
import { everyInterval, type ScheduledJob } from './interval.js';

/**
 * Runs the webhook dispatcher every `intervalMs` in this process (0: never). Safe on every
 * instance at once: the dispatcher claims its work in the database.
 */
export function scheduleWebhookDispatch(deps: DispatcherDeps, intervalMs: number): ScheduledJob {
  const dispatcher = new WebhookDispatcher(deps);
  return everyInterval('webhook dispatch', intervalMs, deps.logger, () => dispatcher.tick());
}
