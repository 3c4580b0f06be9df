/**
 * The `# Current time` prompt section for ContextBuilding (20): the time the message arrived,
 * in the configured zone, so the model can turn "tomorrow at 9" into a time with an offset
 * (schedule_message) without a get_current_time round trip. Last in the prompt: the memory
 * sections above it already change every turn, so it costs no cached prefix.
 */
import { format } from 'date-fns';
import { TZDate } from '@date-fns/tz';
import type { PromptSection, Turn } from '../pipeline/turn.js';

export function createTimeSection(timezone: string): (turn: Turn) => Promise<PromptSection | null> {
  return async (turn) => {
    const d = new TZDate(turn.inbound.receivedAt.getTime(), timezone);
    const content = `# Current time\n${format(d, "EEEE d MMMM yyyy, HH:mm")} in the user's time zone ${timezone} (${format(d, "yyyy-MM-dd'T'HH:mm:ssxxx")}).`;
    return { name: 'time', content };
  };
}
