/** get_current_time: the date and time now, in the configured time zone (or one the model names). */
import { format } from 'date-fns';
import { TZDate } from '@date-fns/tz';
import { isValidTimezone } from '../../config/env.js';
import type { Tool } from '../../tools/types.js';

export function createDateTimeTool(defaultTimezone: string, now: () => Date = () => new Date()): Tool<{ timezone?: string }> {
  return {
    name: 'get_current_time',
    description: 'Current date, time and weekday. Use it for today, now and relative dates.',
    parameters: {
      type: 'object',
      properties: {
        timezone: { type: 'string', description: `IANA zone, e.g. Europe/Berlin (default ${defaultTimezone})` },
      },
      additionalProperties: false,
    },
    execute({ timezone }) {
      const tz = timezone ?? defaultTimezone;
      if (!isValidTimezone(tz)) return `Error: unknown time zone "${tz}". Use an IANA name such as Europe/Berlin.`;
      const d = new TZDate(now().getTime(), tz);
      return JSON.stringify({
        timezone: tz,
        iso: format(d, "yyyy-MM-dd'T'HH:mm:ssXXX"),
        weekday: format(d, 'EEEE'),
        human: format(d, 'EEEE d MMMM yyyy, HH:mm'),
      });
    },
  };
}
