import path from 'node:path';
import { defineConfig } from 'prisma/config';
import { PrismaPg } from '@prisma/adapter-pg';

// Migrations run through the WebAssembly schema engine over the pg driver adapter: Prisma's native
// engines are downloaded at first use, which cannot happen on offline machines (ENVIRONMENT.md).
export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: path.join('prisma', 'schema.prisma'),
  migrations: { path: path.join('prisma', 'migrations') },
  async adapter() {
    return new PrismaPg({ connectionString: process.env.DATABASE_URL ?? 'postgresql://localhost:5432/amy' });
  },
});
