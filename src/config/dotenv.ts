/**
 * `.env` of the working directory into process.env, for the daemon and every CLI (values the
 * environment already has win). Quiet: dotenv 17 otherwise prints a banner on stdout, which
 * belongs to the replies. An empty `TZ=` means "the system's zone", as an empty line means
 * "the default" for every setting; Node would instead switch to "Etc/Unknown" the moment TZ is
 * set to '', so the empty value is removed.
 */
import dotenv from 'dotenv';

export function loadDotEnv(): void {
  dotenv.config({ quiet: true });
  if (process.env.TZ !== undefined && process.env.TZ.trim() === '') delete process.env.TZ;
}
