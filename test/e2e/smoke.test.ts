import { createTestDatabase } from '../support/database';

test('a suite gets its own migrated database', async () => {
  const t = await createTestDatabase();
  try {
    expect(await t.db.turn.count()).toBe(0);
  } finally {
    await t.drop();
  }
});
