import type { Reader, Writer } from '../client.js';
import { asc, eq } from 'drizzle-orm';
import { type Workspace, workspaces } from '../schema/index.js';
import { lostAnswer } from '../faults.js';

export async function createWorkspace(
  db: Writer,
  input: { name: string; plan?: string },
): Promise<Workspace> {
  const [row] = await db.insert(workspaces).values(input).returning();
  if (!row) throw lostAnswer('insert into workspaces');
  return row;
}

export async function getWorkspaceById(db: Reader, id: string): Promise<Workspace | undefined> {
  const [row] = await db.select().from(workspaces).where(eq(workspaces.id, id)).limit(1);
  return row;
}

/** Names are not unique; returns the oldest workspace with that name. */
export async function findWorkspaceByName(
  db: Reader,
  name: string,
): Promise<Workspace | undefined> {
  const [row] = await db
    .select()
    .from(workspaces)
    .where(eq(workspaces.name, name))
    .orderBy(asc(workspaces.createdAt), asc(workspaces.id))
    .limit(1);
  return row;
}

/** The oldest workspace, e.g. the default one of a single-tenant install. */
export async function findFirstWorkspace(db: Reader): Promise<Workspace | undefined> {
  const [row] = await db
    .select()
    .from(workspaces)
    .orderBy(asc(workspaces.createdAt), asc(workspaces.id))
    .limit(1);
  return row;
}

export async function countWorkspaces(db: Writer): Promise<number> {
  return db.$count(workspaces);
}
