import { Command, InvalidArgumentError, Option } from 'commander';
import {
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENT_TYPES,
  type WebhookDeliveryPage,
  type WebhookDeliveryStatus,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
  type WebhookEventType,
} from '@mnemo/client';
import type { App } from '../context.js';
import { keyValues, table } from '../output.js';
import { choice, orList, positiveInt } from '../parse.js';
import type { Bind } from './memories.js';
import { defined } from './shared.js';

/** `--events memory.created,memory.deleted`: a comma-separated list of the contract's types. */
function eventTypes(value: string): WebhookEventType[] {
  const types = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const type of types) {
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type)) {
      throw new InvalidArgumentError(
        `${type} is not an event type: ${orList(WEBHOOK_EVENT_TYPES)}`,
      );
    }
  }
  return types as WebhookEventType[];
}

const describeEndpoint = (endpoint: WebhookEndpoint) =>
  keyValues([
    ['id', endpoint.id],
    ['url', endpoint.url],
    ['events', endpoint.event_types.length === 0 ? 'all' : endpoint.event_types.join(', ')],
    ['enabled', endpoint.enabled ? 'yes' : 'no'],
    ['description', endpoint.description || '-'],
  ]);

const withSecret = (result: WebhookEndpointWithSecret) =>
  `${describeEndpoint(result.endpoint)}\n\nsigning secret (shown once, keep it safe):\n  ${result.secret}`;

function formatDeliveries(page: WebhookDeliveryPage): string {
  if (page.results.length === 0) return 'no deliveries';
  const rows = page.results.map((d) => [
    d.created_at,
    d.event_type,
    d.status,
    String(d.attempts),
    d.response_status === null ? '-' : String(d.response_status),
    d.next_attempt_at ?? '-',
    d.id,
  ]);
  const footer = `${page.total} in total${page.has_more ? `; next: --page ${page.page + 1}` : ''}`;
  return `${table([['TIME', 'EVENT', 'STATUS', 'ATTEMPTS', 'HTTP', 'NEXT ATTEMPT', 'ID'], ...rows])}\n\n${footer}`;
}

interface EndpointFlags {
  events?: WebhookEventType[];
  description?: string;
}

/**
 * `mnemo webhooks create|list|get|update|delete|rotate-secret|deliveries|replay`: signed
 * lifecycle webhooks (docs/webhooks.md).
 */
export function webhooksCommand(bind: Bind): Command {
  const eventsOption = () =>
    new Option('--events <types>', `comma-separated: ${orList(WEBHOOK_EVENT_TYPES)}`).argParser(
      eventTypes,
    );
  const create = new Command('create')
    .description('Register an endpoint; prints its signing secret once')
    .argument('<url>', 'http or https URL that receives the events')
    .addOption(eventsOption())
    .option('--description <text>', 'what the endpoint is for')
    .action(
      bind(async ({ client, output }: App, url: string, flags: EndpointFlags) => {
        const result = await client.webhooks.create(
          defined({ url, event_types: flags.events, description: flags.description }),
        );
        output.result(result, withSecret);
      }),
    );
  const list = new Command('list').description("The workspace's endpoints").action(
    bind(async ({ client, output }: App) => {
      output.result(await client.webhooks.list(), (r) =>
        r.results.length === 0
          ? 'no webhook endpoints'
          : table([
              ['ID', 'URL', 'EVENTS', 'ENABLED'],
              ...r.results.map((e) => [
                e.id,
                e.url,
                e.event_types.length === 0 ? 'all' : e.event_types.join(','),
                e.enabled ? 'yes' : 'no',
              ]),
            ]),
      );
    }),
  );
  const get = new Command('get')
    .description('One endpoint')
    .argument('<id>', 'endpoint id')
    .action(
      bind(async ({ client, output }: App, id: string) => {
        output.result(await client.webhooks.get(id), describeEndpoint);
      }),
    );
  const update = new Command('update')
    .description('Change an endpoint, or pause it with --disable')
    .argument('<id>', 'endpoint id')
    .option('--url <url>', 'a new URL')
    .addOption(eventsOption())
    .option('--all-events', 'receive every event type')
    .option('--description <text>', 'a new description')
    .option('--enable', 'deliver again')
    .option('--disable', 'stop delivering')
    .action(
      bind(
        async (
          { client, output }: App,
          id: string,
          flags: EndpointFlags & {
            url?: string;
            allEvents?: boolean;
            enable?: boolean;
            disable?: boolean;
          },
        ) => {
          if (flags.enable && flags.disable) {
            throw new InvalidArgumentError('--enable and --disable exclude each other');
          }
          const patch = defined({
            url: flags.url,
            description: flags.description,
            event_types: flags.allEvents ? [] : flags.events,
            enabled: flags.enable ? true : flags.disable ? false : undefined,
          });
          output.result(await client.webhooks.update(id, patch), describeEndpoint);
        },
      ),
    );
  const remove = new Command('delete')
    .description('Delete an endpoint and its delivery log')
    .argument('<id>', 'endpoint id')
    .action(
      bind(async ({ client, output }: App, id: string) => {
        output.result(await client.webhooks.remove(id), () => `deleted endpoint ${id}`);
      }),
    );
  const rotate = new Command('rotate-secret')
    .description('A new signing secret, printed once; the old one signs for 24 more hours')
    .argument('<id>', 'endpoint id')
    .action(
      bind(async ({ client, output }: App, id: string) => {
        output.result(await client.webhooks.rotateSecret(id), withSecret);
      }),
    );
  const deliveries = new Command('deliveries')
    .description("An endpoint's delivery log, newest first")
    .argument('<id>', 'endpoint id')
    .addOption(
      new Option('--status <status>', orList(WEBHOOK_DELIVERY_STATUSES)).argParser(
        choice(WEBHOOK_DELIVERY_STATUSES),
      ),
    )
    .option('--page <n>', 'page, from 1', positiveInt)
    .option('--page-size <n>', 'deliveries per page, 1 to 100', positiveInt)
    .action(
      bind(
        async (
          { client, output }: App,
          id: string,
          flags: { status?: WebhookDeliveryStatus; page?: number; pageSize?: number },
        ) => {
          const page = await client.webhooks.deliveries(
            id,
            defined({ status: flags.status, page: flags.page, page_size: flags.pageSize }),
          );
          output.result(page, formatDeliveries);
        },
      ),
    );
  const replay = new Command('replay')
    .description('Send a finished delivery again (same webhook-id)')
    .argument('<id>', 'endpoint id')
    .argument('<delivery-id>', 'delivery id (from `mnemo webhooks deliveries`)')
    .action(
      bind(async ({ client, output }: App, id: string, deliveryId: string) => {
        output.result(
          await client.webhooks.replay(id, deliveryId),
          (d) => `queued delivery ${d.id} (${d.event_type}) again`,
        );
      }),
    );
  return new Command('webhooks')
    .description('Signed lifecycle webhooks (operator routes)')
    .addCommand(create)
    .addCommand(list)
    .addCommand(get)
    .addCommand(update)
    .addCommand(remove)
    .addCommand(rotate)
    .addCommand(deliveries)
    .addCommand(replay);
}
