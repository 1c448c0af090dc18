import { z } from 'zod';
import {
  IsoTimestamp,
  Metadata,
  MemoryType,
  OwnerFields,
  PgString,
  ScopeFields,
  checkOwnerAliases,
} from './common.js';
import { LIMITS } from './limits.js';
import { MemoryInsertFields, MemoryInsertResponse } from './memories.js';

/** Bounds of conversation and document ingest (characters unless named otherwise). */
export const INGEST_LIMITS = {
  /** Messages of one conversation request. */
  messages: { min: 1, max: 200 },
  /** One message's content. */
  messageContent: { min: 1, max: 40_000 },
  /** A speaker's name. */
  speakerName: { min: 1, max: 100 },
  /** A transcript, and the sum of the message contents of one request. */
  conversationText: { min: 1, max: 400_000 },
  /** A document's text in one request (the CLI sends larger ones in parts). */
  documentText: { min: 1, max: 400_000 },
  /** A document piece: one memory. */
  pieceChars: { min: 500, max: LIMITS.memoryText.max, default: 6000 },
  /** The caller's idempotency key: per-item keys are derived from it and must stay ≤ 128. */
  idempotencyKey: { min: LIMITS.idempotencyKey.min, max: 96 },
  /**
   * Memories one request writes (turns or document pieces), one after another: about 30-60 ms
   * each, so a full request stays within a few seconds.
   */
  items: { max: 100 },
  /** Names of `assistant_names`. */
  assistantNames: { max: 50 },
} as const;

const boundedString = (bounds: { min: number; max: number }) =>
  PgString.pipe(z.string().min(bounds.min).max(bounds.max));

const IngestKey = boundedString(INGEST_LIMITS.idempotencyKey);

/** What every write of one conversation or document shares (owner, labels, write options). */
const SharedWriteFields = OwnerFields.merge(ScopeFields).extend({
  /** Merged into every stored memory's metadata; the ingest's own keys win on a clash. */
  metadata: Metadata.optional(),
  memory_type: MemoryType.optional(),
  importance: MemoryInsertFields.shape.importance,
  extract: z.boolean().optional(),
  /**
   * Per-item keys are derived from it (`<key>:<item>:<hash of the item's write>`): re-sending
   * the same conversation or document replays what was stored instead of storing it again.
   */
  idempotency_key: IngestKey.optional(),
});

export const MESSAGE_ROLES = ['user', 'assistant', 'system', 'tool'] as const;
export const MessageRole = z.enum(MESSAGE_ROLES);
export type MessageRole = z.infer<typeof MessageRole>;

export const ConversationMessage = z.object({
  role: MessageRole,
  content: boundedString(INGEST_LIMITS.messageContent),
  /** The speaker's name, kept in the text and the metadata (`speakers`). */
  name: boundedString(INGEST_LIMITS.speakerName).optional(),
  /** When it was said: the first timestamp of a turn becomes the memory's `effective_at`. */
  timestamp: IsoTimestamp.optional(),
});
export type ConversationMessage = z.infer<typeof ConversationMessage>;

/**
 * How messages become memories: `exchange` (default) one memory per user message with the
 * replies that follow it (between people, another person's message is the reply);
 * `message` one memory per message.
 */
export const CONVERSATION_GROUPINGS = ['exchange', 'message'] as const;
export const ConversationGrouping = z.enum(CONVERSATION_GROUPINGS);

export const ConversationFields = SharedWriteFields.extend({
  messages: z
    .array(ConversationMessage)
    .min(INGEST_LIMITS.messages.min)
    .max(INGEST_LIMITS.messages.max)
    .optional(),
  /** `Speaker: text` lines; a line without a speaker continues the message before it. */
  transcript: boundedString(INGEST_LIMITS.conversationText).optional(),
  /** Transcript speakers (besides `assistant`, `ai`, `bot`) whose lines are the assistant's. */
  assistant_names: z
    .array(boundedString(INGEST_LIMITS.speakerName))
    .max(INGEST_LIMITS.assistantNames.max)
    .optional(),
  group_by: ConversationGrouping.optional(),
  /** Only messages of these roles are stored; default all. */
  roles: z.array(MessageRole).min(1).optional(),
  /** Kept in every turn's metadata (`conversation_id`). */
  conversation_id: boundedString({ min: 1, max: 128 }).optional(),
});

/** Exactly one of `messages` or `transcript`, within the size bound. */
function checkConversation(
  value: z.infer<typeof ConversationFields>,
  ctx: z.RefinementCtx,
  path: (string | number)[] = [],
): void {
  checkOwnerAliases(value, ctx);
  const given = (value.messages ? 1 : 0) + (value.transcript !== undefined ? 1 : 0);
  if (given !== 1) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: [...path, value.messages ? 'transcript' : 'messages'],
      message: 'give exactly one of messages or transcript',
    });
  }
  const total = (value.messages ?? []).reduce((sum, m) => sum + m.content.length, 0);
  if (total > INGEST_LIMITS.conversationText.max) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: [...path, 'messages'],
      message: `the contents add up to ${total} characters; at most ${INGEST_LIMITS.conversationText.max} per request`,
    });
  }
}

export const ConversationIngestPayload = ConversationFields.superRefine((value, ctx) =>
  checkConversation(value, ctx),
);
export type ConversationIngestPayload = z.infer<typeof ConversationIngestPayload>;

export const DocumentFields = SharedWriteFields.extend({
  text: boundedString(INGEST_LIMITS.documentText),
  title: boundedString({ min: 1, max: 500 }).optional(),
  /** Where the document comes from: a URL or a file name. */
  source: boundedString({ min: 1, max: 2000 }).optional(),
  /** Names the document across requests; default: a hash of `text`. */
  document_id: boundedString({ min: 1, max: 128 }).optional(),
  /** The number of this request's first section in the whole document (a document sent in parts). */
  section_offset: z.number().int().min(0).max(1_000_000).optional(),
  /**
   * The title of the section `text` starts in, when it continues one of an earlier request (a
   * long section sent in parts): text before this request's first heading is given this title.
   */
  section_title: boundedString({ min: 1, max: 500 }).optional(),
  /** Longest piece (one memory) in characters. */
  max_piece_chars: z
    .number()
    .int()
    .min(INGEST_LIMITS.pieceChars.min)
    .max(INGEST_LIMITS.pieceChars.max)
    .optional(),
  effective_at: IsoTimestamp.optional(),
});

export const DocumentIngestPayload = DocumentFields.superRefine(checkOwnerAliases);
export type DocumentIngestPayload = z.infer<typeof DocumentIngestPayload>;

/** POST /v1/ingest: one of three kinds, by `type`. */
export const IngestPayload = z
  .discriminatedUnion('type', [
    MemoryInsertFields.extend({ type: z.literal('memory') }),
    ConversationFields.extend({ type: z.literal('conversation') }),
    DocumentFields.extend({ type: z.literal('document') }),
  ])
  .superRefine((value, ctx) => {
    if (value.type === 'conversation') checkConversation(value, ctx);
    else checkOwnerAliases(value, ctx);
  });
export type IngestPayload = z.infer<typeof IngestPayload>;

/**
 * What happened to one item (a turn or a document piece): `stored` a new memory; `deduped` an
 * existing memory stands for it; `replayed` its write had been done under the same derived
 * idempotency key; `failed` its write was refused (`error`); `skipped` not tried after a failure.
 */
export const ITEM_STATUSES = ['stored', 'deduped', 'replayed', 'failed', 'skipped'] as const;

const ItemOutcome = z.object({
  status: z.enum(ITEM_STATUSES),
  memory_id: z.string().optional(),
  /** The write pipeline's response, as POST /v1/memories gives it. */
  write: MemoryInsertResponse.optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

const Counts = z.object({
  /** False when an item failed: it and the items after it were not stored. */
  complete: z.boolean(),
  stored: z.number().int().min(0),
  deduped: z.number().int().min(0),
  replayed: z.number().int().min(0),
  failed: z.number().int().min(0),
  skipped: z.number().int().min(0),
});

export const ConversationTurnResult = ItemOutcome.extend({
  turn: z.number().int().min(0),
  /** The turn's messages, as indexes into the request's messages (or transcript messages). */
  message_start: z.number().int().min(0),
  message_end: z.number().int().min(0),
});

export const ConversationIngestResponse = Counts.extend({
  /** Messages read (from `messages` or the transcript) and turns made of them. */
  messages: z.number().int().min(0),
  turns: z.array(ConversationTurnResult),
});
export type ConversationIngestResponse = z.infer<typeof ConversationIngestResponse>;

export const DocumentPieceResult = ItemOutcome.extend({
  section_index: z.number().int().min(0),
  section_title: z.string(),
  /** 1-based: piece n of `pieces` of its section. */
  piece: z.number().int().min(1),
  pieces: z.number().int().min(1),
});

export const DocumentIngestResponse = Counts.extend({
  document_id: z.string(),
  sections: z.number().int().min(0),
  items: z.array(DocumentPieceResult),
});
export type DocumentIngestResponse = z.infer<typeof DocumentIngestResponse>;

export const IngestResponse = z.discriminatedUnion('type', [
  z.object({ type: z.literal('memory'), result: MemoryInsertResponse }),
  ConversationIngestResponse.extend({ type: z.literal('conversation') }),
  DocumentIngestResponse.extend({ type: z.literal('document') }),
]);
export type IngestResponse = z.infer<typeof IngestResponse>;
