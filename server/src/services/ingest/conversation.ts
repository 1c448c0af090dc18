import {
  INGEST_LIMITS,
  LIMITS,
  type ConversationIngestPayload,
  type ConversationIngestResponse,
  type ConversationMessage,
  type MemoryInsertPayload,
  type MessageRole,
} from '@mnemo/contract';
import { ServiceError } from '../../errors.js';
import {
  derivedKey,
  sharedWriteFields,
  tooManyItems,
  writeItems,
  type IngestRequest,
  type IngestResult,
} from './items.js';
import type { MemoryWriteDeps } from '../memory-write/index.js';

/** Transcript speakers whose lines are the assistant's besides the caller's `assistant_names`. */
const ASSISTANT_LABELS = ['assistant', 'ai', 'bot'];
const USER_LABELS = ['user', 'human'];

// `Speaker: text`: a speaker is a short label without a colon, starting with a letter.
const SPEAKER_LINE = /^([\p{L}][^:\n]{0,99}):[ \t]?(.*)$/u;

/**
 * Reads a transcript: a line `Speaker: text` starts a message, any other line continues the one
 * before it. `user`/`human` are the user, `assistant`/`ai`/`bot` and `assistantNames` the
 * assistant, `system` and `tool` those roles (case-insensitive); any other speaker is a user
 * with that name. Text before the first speaker is refused.
 */
export function parseTranscript(
  transcript: string,
  assistantNames: readonly string[] = [],
): ConversationMessage[] {
  const assistants = new Set([...ASSISTANT_LABELS, ...assistantNames.map((n) => n.toLowerCase())]);
  const messages: Array<{ role: MessageRole; name?: string; lines: string[] }> = [];
  for (const line of transcript.replace(/\r\n?/g, '\n').split('\n')) {
    const speaker = SPEAKER_LINE.exec(line);
    if (speaker) {
      const label = speaker[1]!.trim();
      const lower = label.toLowerCase();
      const role: MessageRole = USER_LABELS.includes(lower)
        ? 'user'
        : assistants.has(lower)
          ? 'assistant'
          : lower === 'system' || lower === 'tool'
            ? lower
            : 'user';
      const named = !USER_LABELS.includes(lower) && !ASSISTANT_LABELS.includes(lower);
      const keepName = named && lower !== 'system' && lower !== 'tool';
      messages.push({ role, ...(keepName ? { name: label } : {}), lines: [speaker[2] ?? ''] });
      continue;
    }
    const current = messages[messages.length - 1];
    if (current) current.lines.push(line);
    else if (line.trim() !== '') {
      throw new ServiceError(
        'BAD_REQUEST',
        'The transcript must start with a "Speaker: text" line',
        {
          transcript: ['must start with a "Speaker: text" line'],
        },
      );
    }
  }
  const parsed = messages
    .map(({ lines, ...rest }) => ({ ...rest, content: lines.join('\n').trim() }))
    .filter((message) => message.content !== '');
  if (parsed.length === 0) {
    throw new ServiceError('BAD_REQUEST', 'The transcript has no messages', {
      transcript: ['has no "Speaker: text" line with text'],
    });
  }
  if (parsed.length > INGEST_LIMITS.messages.max) {
    throw new ServiceError('BAD_REQUEST', 'The transcript has too many messages', {
      transcript: [`has ${parsed.length} messages; at most ${INGEST_LIMITS.messages.max}`],
    });
  }
  const long = parsed.findIndex((m) => m.content.length > INGEST_LIMITS.messageContent.max);
  if (long >= 0) {
    throw new ServiceError('BAD_REQUEST', 'A transcript message is too long', {
      transcript: [`message ${long} has more than ${INGEST_LIMITS.messageContent.max} characters`],
    });
  }
  return parsed;
}

/** A message as a line of a turn's text: `Asha (user): …` or `assistant: …`. */
export function messageLine(message: ConversationMessage): string {
  const label = message.name ? `${message.name} (${message.role})` : message.role;
  return `${label}: ${message.content}`;
}

export interface Turn {
  /** Indexes into the messages, in order. */
  indexes: number[];
  text: string;
}

/**
 * Groups messages into turns. `message`: one turn per message. `exchange`: a turn is a speaker's
 * message(s) and the replies after them (with any system message before them). A user message
 * starts a new turn once the current one holds an assistant or tool reply, and, between people
 * (user messages under different names, as a chat between two people has no assistant), the
 * turn's first speaker starts a new one once another person has answered. So a user-assistant
 * chat groups as question and answer, and a two-person chat as a message and its answer instead
 * of a whole session in one memory. Either way a turn whose text would pass the memory text limit
 * ends before the message that would push it over. Messages of roles outside `roles` are left out.
 */
export function groupTurns(
  messages: readonly ConversationMessage[],
  groupBy: 'exchange' | 'message',
  roles?: readonly MessageRole[],
): Turn[] {
  const turns: Turn[] = [];
  let current: Turn | undefined;
  let replied = false;
  /** The name of the current turn's first user message ('' unnamed); undefined before it. */
  let opener: string | undefined;
  let answered = false;
  messages.forEach((message, index) => {
    if (roles && !roles.includes(message.role)) return;
    const line = messageLine(message);
    const fits = current && current.text.length + 1 + line.length <= LIMITS.memoryText.max;
    const speaker = message.role === 'user' ? (message.name ?? '') : undefined;
    const startsExchange = speaker !== undefined && (replied || (answered && speaker === opener));
    if (!current || groupBy === 'message' || startsExchange || !fits) {
      current = { indexes: [index], text: line };
      turns.push(current);
      replied = isReply(message.role);
      opener = speaker;
      answered = false;
      return;
    }
    current.indexes.push(index);
    current.text = `${current.text}\n${line}`;
    if (isReply(message.role)) replied = true;
    if (speaker !== undefined) {
      if (opener === undefined) opener = speaker;
      else if (speaker !== opener) answered = true;
    }
  });
  return turns;
}

// A system message sets the scene for the exchange after it; it answers nothing.
const isReply = (role: MessageRole) => role === 'assistant' || role === 'tool';

/** The comma-joined distinct values, in order of appearance. */
const distinct = (values: Array<string | undefined>) =>
  [...new Set(values.filter((v): v is string => v !== undefined))].join(', ');

/**
 * A conversation's writes: messages (or a transcript) → turns → one memory write per turn, in
 * order, each with what the answer says of it.
 */
export function conversationItems(payload: ConversationIngestPayload) {
  const messages =
    payload.messages ?? parseTranscript(payload.transcript ?? '', payload.assistant_names);
  const turns = groupTurns(messages, payload.group_by ?? 'exchange', payload.roles);
  if (turns.length === 0) {
    throw new ServiceError('BAD_REQUEST', 'No message has one of the roles asked for', {
      roles: ['leaves no message to store'],
    });
  }
  if (turns.length > INGEST_LIMITS.items.max) throw tooManyItems(turns.length, 'turns');
  const shared = sharedWriteFields(payload);
  const items = turns.map((turn, index) => {
    const group = turn.indexes.map((i) => messages[i]!);
    const speakers = distinct(group.map((m) => m.name));
    const effectiveAt = group.find((m) => m.timestamp)?.timestamp;
    const write: MemoryInsertPayload = {
      ...shared,
      text: turn.text,
      metadata: {
        ...payload.metadata,
        ingest: 'conversation',
        ...(payload.conversation_id ? { conversation_id: payload.conversation_id } : {}),
        turn: index,
        message_start: turn.indexes[0]!,
        message_end: turn.indexes[turn.indexes.length - 1]!,
        roles: distinct(group.map((m) => m.role)),
        ...(speakers ? { speakers } : {}),
      },
      ...(effectiveAt ? { effective_at: effectiveAt } : {}),
    };
    return {
      payload: payload.idempotency_key
        ? { ...write, idempotency_key: derivedKey(payload.idempotency_key, `t${index}`, write) }
        : write,
      details: {
        turn: index,
        message_start: turn.indexes[0]!,
        message_end: turn.indexes[turn.indexes.length - 1]!,
      },
    };
  });
  return { messages, items };
}

/**
 * POST /v1/memories/conversation: the conversation's turns written through the write pipeline
 * (see docs/ingest.md for grouping, attribution, idempotency and partial failure).
 */
export async function ingestConversation(
  deps: MemoryWriteDeps,
  request: IngestRequest,
  payload: ConversationIngestPayload,
): Promise<IngestResult<ConversationIngestResponse>> {
  const { messages, items } = conversationItems(payload);
  const { counts, results, audited } = await writeItems(deps, request, items);
  return { response: { ...counts, messages: messages.length, turns: results }, audited };
}
