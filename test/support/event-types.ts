export { TURN_EVENT_TYPES as STREAM_EVENT_TYPES } from '../../contracts/event-catalog';
