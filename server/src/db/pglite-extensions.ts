import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { vector } from '@electric-sql/pglite-pgvector';

/**
 * The extensions every embedded database loads: pgvector, and btree_gin for the keyword index
 * that holds the owner beside the words (migration 0021). A module of its own, so test setup can
 * load them without the rest of the database client.
 */
export const PGLITE_EXTENSIONS = { vector, btree_gin };
