import { ulid } from 'ulid';
import { ID_PREFIXES, type IdKind } from '../contracts/ids';

export const newId = (kind: IdKind) => `${ID_PREFIXES[kind]}${ulid()}`;
