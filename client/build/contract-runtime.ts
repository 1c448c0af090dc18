// What the client uses of @mnemo/contract at run time (see tsup.config.ts).
export { contract } from '../../contract/src/contract.js';
export { ERROR_STATUS } from '../../contract/src/errors.js';
export { MEMORY_TYPES, OWNER_TYPES } from '../../contract/src/schemas/common.js';
