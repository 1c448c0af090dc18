// What the client uses of @mnemo/contract at run time (see tsup.config.ts).
export { contract } from '../../contract/src/contract.js';
export { ERROR_STATUS } from '../../contract/src/errors.js';
export { PII_SCAN_HEADER } from '../../contract/src/routes/memories.js';
export {
  CLIENT_OWNER_ID_ALIASES,
  CLIENT_OWNER_TYPE_ALIASES,
  CLIENT_OWNER_TYPES,
  LEGACY_OWNER_TYPES,
  MEMORY_TYPES,
  OWNER_TYPES,
} from '../../contract/src/schemas/common.js';
export { LIMITS } from '../../contract/src/schemas/limits.js';
export { CHUNK_PROFILES } from '../../contract/src/schemas/memories.js';
export {
  FEEDBACK_VALUES,
  RETRIEVAL_PROFILES,
  SEARCH_MODES,
} from '../../contract/src/schemas/search.js';
export { INGEST_LIMITS } from '../../contract/src/schemas/ingest.js';
export { splitDocumentSections, splitSectionPieces } from '../../contract/src/document-sections.js';
export { JSONL_CONTENT_TYPE } from '../../contract/src/schemas/owner-data.js';
export {
  CONSISTENCY_TOKEN_HEADER,
  CONSISTENCY_TOKEN_PATTERN,
  consistencyTokenAtLeast,
} from '../../contract/src/consistency.js';
export {
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENT_TYPES,
} from '../../contract/src/schemas/webhooks.js';
export { MAX_PINS_PER_OWNER } from '../../contract/src/schemas/pins.js';
