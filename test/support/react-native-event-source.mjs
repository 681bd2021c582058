// Stands in for `react-native-event-source` in the React Native example (docs/streaming.md#react-native), which
// cannot load in Node: the same constructor, `new EventSource(url, { headers })`, over the `eventsource`
// package.
import { EventSource as WhatwgEventSource } from 'eventsource';

export default class EventSource extends WhatwgEventSource {
  constructor(url, options = {}) {
    super(url, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, ...options.headers } }),
    });
  }
}
