// Kept free of zod so workflow code can import it without bundling a schema library.
const DOCS_BASE = 'https://docs.amy.health/concepts/errors';
export const docsUrl = (code: string) => `${DOCS_BASE}#${code}`;
