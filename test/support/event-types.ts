import { eventDataSchemas } from '../../contracts/events';

export const STREAM_EVENT_TYPES = Object.keys(eventDataSchemas);
