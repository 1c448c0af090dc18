import { z } from 'zod';
import { boundedText, Metadata, OwnerType, PgString } from './common.js';
import { INPUT_BOUNDS } from './limits.js';

/** The connector kinds a workspace configures. */
export const CONNECTOR_KINDS = ['webhook', 'chat_import'] as const;
export type ConnectorKind = (typeof CONNECTOR_KINDS)[number];

/** Bounds of connector settings. */
export const CONNECTOR_LIMITS = {
  /** Keys of `default_metadata`. */
  metadataKeys: 20,
  /** Entries of `allowed_sources`. */
  sources: 50,
  /** Characters of one source name. */
  sourceLength: 128,
} as const;

const SourceName = PgString.pipe(
  z
    .string()
    .min(1)
    .max(CONNECTOR_LIMITS.sourceLength)
    .regex(/^[A-Za-z0-9._:/#@-]+$/, 'letters, digits and . _ : / # @ - only'),
);

/**
 * The settings of one connector kind. Stored per workspace for the connectors that feed it
 * (docs/operator.md): the server keeps and validates them; connectors read them with
 * `GET /v1/connectors/settings` and apply them to what they send.
 */
export const ConnectorKindSettings = z
  .object({
    /** Whether this connector may feed the workspace. */
    enabled: z.boolean(),
    /** Owner type of memories when the source does not say. */
    default_owner_type: OwnerType,
    /** Namespace memories go to when the source does not say; null: none. */
    default_namespace: boundedText(INPUT_BOUNDS.label).nullable(),
    /** Metadata merged under each memory's own (the memory's keys win). Replaced as a whole by PATCH. */
    default_metadata: Metadata.refine(
      (value) => Object.keys(value).length <= CONNECTOR_LIMITS.metadataKeys,
      `at most ${CONNECTOR_LIMITS.metadataKeys} keys`,
    ),
    /** Whether writes ask for extraction (child memories). */
    extract: z.boolean(),
    /** Sources (e.g. `zendesk`, `slack:#support`) accepted; empty: any. Replaced as a whole by PATCH. */
    allowed_sources: z.array(SourceName).max(CONNECTOR_LIMITS.sources),
  })
  .strict();
export type ConnectorKindSettings = z.infer<typeof ConnectorKindSettings>;

export const ConnectorSettings = z.object({
  webhook: ConnectorKindSettings,
  chat_import: ConnectorKindSettings,
  /** When the settings last changed; null: never (the defaults). */
  updated_at: z.string().nullable(),
});
export type ConnectorSettings = z.infer<typeof ConnectorSettings>;

/** What a workspace has before its first PATCH. */
export const DEFAULT_CONNECTOR_SETTINGS: Record<ConnectorKind, ConnectorKindSettings> = {
  webhook: {
    enabled: false,
    default_owner_type: 'user',
    default_namespace: null,
    default_metadata: {},
    extract: true,
    allowed_sources: [],
  },
  chat_import: {
    enabled: true,
    default_owner_type: 'user',
    default_namespace: null,
    default_metadata: {},
    extract: true,
    allowed_sources: [],
  },
};

/** `PATCH /v1/connectors/settings`: the fields to change, per kind; the rest stays. */
export const ConnectorSettingsPatch = z
  .object({
    webhook: ConnectorKindSettings.partial().strict().optional(),
    chat_import: ConnectorKindSettings.partial().strict().optional(),
  })
  .strict()
  .refine(
    (patch) => Object.values(patch).some((kind) => kind && Object.keys(kind).length > 0),
    'change at least one field',
  );
export type ConnectorSettingsPatch = z.infer<typeof ConnectorSettingsPatch>;
