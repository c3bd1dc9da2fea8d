/**
 * The Redis event log's reader over a real redis-server, one partition: where it starts, the entries it
 * cannot read (skipped, each told), a log that started over, reads that fail and work again (one line
 * each), and the order of an instance's own deliveries against what its reader brings.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { RedisLinks } from '../../../src/redis.js';
import { singleServer } from '../../../src/redis-target.js';
import type { PaymentEvent } from '../../../src/realtime/events.js';
import { logKeys } from '../../../src/realtime/log-keys.js';
import { redisEventLog, type RedisEventLog } from '../../../src/realtime/redis-log.js';
import { encode } from '../../../src/upstream/codec.js';
import { describeWith } from '../../support/tools.js';
import { eventually, sleep } from '../../realtime/support.js';
import { redisClientsForSuite } from '../../realtime/redis-server.js';
import { approvedWebhook, type Line } from './redis-log.fixtures.js';

const ACCOUNT = 41;

const webhook = (id: number, objectId: number | null, at: string) => approvedWebhook(ACCOUNT, id, objectId, at);

/**
 * The suite's redis-server, and logs on it with one partition, each subscribed to ACCOUNT with its lines kept;
 * closed after the suite.
 */
function logsForSuite() {
  const client = redisClientsForSuite();
  const opened: RedisEventLog[] = [];
  let url = '';
  beforeAll(() => {
    url = `redis://127.0.0.1:${client().options.port}`;
  });
  afterAll(async () => {
    for (const log of opened) await log.close();
  });
  const openLog = async (prefix: string) => {
    const lines: Line[] = [];
    const logger = createLogger('info', { destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) } });
    const log = await redisEventLog({ target: singleServer(url), prefix, logger, links: new RedisLinks(logger), maxEvents: 1000, partitions: 1 });
    opened.push(log);
    const got: PaymentEvent[] = [];
    log.subscribe(ACCOUNT, (e) => got.push(e));
    return { log, got, lines };
  };
  return { client, openLog };
}

describeWith('redis-server', 'the Redis event log\'s reader', () => {
  const { client, openLog } = logsForSuite();
  let n = 0;

  async function open(prefix: string) {
    const { log, got, lines } = await openLog(prefix);
    const errors = () => lines.filter((l) => l.level >= 40 && !/^redis /.test(l.msg));
    return { log, got, lines, errors };
  }

  /** Another instance's entry, written the way the append script writes it. */
  async function foreign(prefix: string, fields: (string | number)[], seq?: number) {
    const keys = logKeys(prefix, 1);
    const next = seq ?? Number(await client().get(keys.sequence(0))) + 1;
    await client().xadd(keys.stream(0), '*', 's', next, ...fields);
    await client().set(keys.sequence(0), next);
  }

  it('starts a second before its first listener, not at the log\'s start, and goes on without a gap', async () => {
    const prefix = `reader-${++n}:`;
    const first = await open(prefix);
    for (const id of [1, 2, 3]) await first.log.append(webhook(id, id, '2026-01-01T10:00:00.000Z'));
    // A partition first needed is read from a second before its listener came (docs/realtime.md): older entries stay unread.
    await sleep(1_500);
    const late = await open(prefix);
    await first.log.append(webhook(4, 4, '2026-01-01T10:00:00.000Z'));
    await eventually(async () => late.got.length, (count) => count > 0);
    await sleep(200);
    expect(late.got.map((e) => [e.id, e.current])).toEqual([[4, true]]);
    expect(late.errors()).toEqual([]);
  });

  it('skips an entry it cannot read, each told with its place, and reads the ones after it', async () => {
    const prefix = `reader-${++n}:`;
    const here = await open(prefix);
    await foreign(prefix, ['c', '1']);
    await foreign(prefix, ['c', '1', 'e', '{not json']);
    await foreign(prefix, ['e', encode(webhook(7, 7, '2026-01-01T10:00:00.000Z')), 'c', '1']);
    // No `c`: an entry that does not say it is current is not.
    await foreign(prefix, ['e', encode(webhook(8, null, '2026-01-01T10:00:00.000Z'))]);
    await eventually(async () => here.got.length, (count) => count >= 2);
    expect(here.got.map((e) => [e.id, e.current])).toEqual([
      [7, true],
      [8, false],
    ]);
    const unreadable = here.lines.filter((l) => l.msg === 'unreadable entry in the event log');
    expect(unreadable.map((l) => [l.level, l.stream])).toEqual([
      [40, logKeys(prefix, 1).stream(0)],
      [40, logKeys(prefix, 1).stream(0)],
    ]);
    expect(new Set(unreadable.map((l) => l.id)).size).toBe(2);
    expect(here.lines.filter((l) => l.level >= 50)).toEqual([]);
  });

  it('says once that the log started over when the sequence goes back, and goes on from there', async () => {
    const prefix = `reader-${++n}:`;
    const here = await open(prefix);
    await foreign(prefix, ['c', '1', 'e', encode(webhook(1, 1, '2026-01-01T10:00:00.000Z'))]);
    await foreign(prefix, ['c', '1', 'e', encode(webhook(2, 2, '2026-01-01T10:00:00.000Z'))]);
    await foreign(prefix, ['c', '1', 'e', encode(webhook(3, 3, '2026-01-01T10:00:00.000Z'))], 1);
    await foreign(prefix, ['c', '1', 'e', encode(webhook(4, 4, '2026-01-01T10:00:00.000Z'))]);
    await eventually(async () => here.got.length, (count) => count >= 4);
    expect(here.got.map((e) => e.id)).toEqual([1, 2, 3, 4]);
    expect(here.errors().map((l) => [l.level, l.msg, l.partition])).toEqual([[50, 'event log started over (Redis lost its data): events appended before are gone', 0]]);
  });

  it('tells a gap before the first entry it reads: its first read learns where the log stood', async () => {
    const prefix = `reader-${++n}:`;
    // The log had reached 5 before this listener came; entries 6 to 8 were trimmed before it read any.
    await client().set(logKeys(prefix, 1).sequence(0), 5);
    const here = await open(prefix);
    await here.log.whenReading(ACCOUNT);
    await foreign(prefix, ['c', '1', 'e', encode(webhook(9, 9, '2026-01-01T10:00:00.000Z'))], 9);
    await eventually(async () => here.got.length, (count) => count >= 1);
    expect(here.errors().map((l) => [l.level, l.partition, l.lost])).toEqual([[50, 0, 3]]);
  });

  it('tells the gap it finds, by how many entries it lost', async () => {
    const prefix = `reader-${++n}:`;
    const here = await open(prefix);
    await foreign(prefix, ['c', '1', 'e', encode(webhook(1, 1, '2026-01-01T10:00:00.000Z'))]);
    await foreign(prefix, ['c', '1', 'e', encode(webhook(2, 2, '2026-01-01T10:00:00.000Z'))], 5);
    await eventually(async () => here.got.length, (count) => count >= 2);
    expect(here.errors().map((l) => [l.level, l.partition, l.lost])).toEqual([[50, 0, 3]]);
  });

  it('says once that reads fail while they fail, whatever the cause, and once that they work again', async () => {
    const prefix = `reader-${++n}:`;
    const here = await open(prefix);
    const stream = logKeys(prefix, 1).stream(0);
    // Not an outage: a key of another type where the stream should be, found when the blocked read (5 s) ends.
    await client().set(stream, 'not a stream');
    await eventually(async () => here.lines.filter((l) => l.msg.startsWith('event log unreadable')).length, (count) => count > 0, 8_000);
    // Several retries, 250 ms apart, meanwhile.
    await sleep(800);
    await client().del(stream);
    await foreign(prefix, ['c', '1', 'e', encode(webhook(1, 1, '2026-01-01T10:00:00.000Z'))], 1);
    await eventually(async () => here.got.length, (count) => count > 0);
    await sleep(300);
    const told = here.lines.filter((l) => l.msg.startsWith('event log'));
    expect(told.map((l) => [l.level, l.msg])).toEqual([
      [40, 'event log unreadable: events from other instances wait until it reads again'],
      [30, 'event log readable again'],
    ]);
    expect((told[0]!.err as { message: string }).message).toMatch(/WRONGTYPE/);
  });

  it('delivers its own snapshot once, and an older entry its reader brings after it as no state change', async () => {
    const prefix = `reader-${++n}:`;
    const here = await open(prefix);
    const at = '2026-01-01T10:00:09.000Z';
    // Its version is the object's own time, not when it was re-read.
    const snapshot: PaymentEvent = { ...webhook(0, 50, at), createdAt: '2026-01-01T10:00:30.000Z', current: true, origin: 'snapshot' };
    expect(await here.log.appendSnapshot(snapshot, Date.parse(at))).toBe(true);
    // Another instance's webhook of the same instant, appended while it was current there: a snapshot ranks above
    // every event id of its instant.
    await foreign(prefix, ['c', '1', 'e', encode(webhook(60, 50, at))]);
    // And one of a later state, which is news.
    await foreign(prefix, ['c', '1', 'e', encode(webhook(61, 50, '2026-01-01T10:00:12.000Z'))]);
    await eventually(async () => here.got.length, (count) => count >= 3);
    await sleep(200);
    expect(here.got.map((e) => [e.id, e.current])).toEqual([
      [0, true],
      [60, false],
      [61, true],
    ]);
  });
});

describeWith('redis-server', 'the Redis event log started over under a live connection', () => {
  const { client, openLog } = logsForSuite();

  async function open(prefix: string) {
    const { log, got, lines } = await openLog(prefix);
    await log.whenReading(ACCOUNT);
    const appendedAgain = () => lines.filter((l) => l.msg.startsWith('event log started over (Redis lost its data): this instance appended')).map((l) => [l.level, l.appended, l.failed]);
    return { log, got, lines, appendedAgain };
  }

  /** Every key of the log gone at once, as a Redis back empty; `then` runs in the same transaction. */
  async function emptied(prefix: string, then?: (multi: ReturnType<ReturnType<typeof client>['multi']>) => void) {
    const found = await client().keys(`${prefix}*`);
    const multi = client().multi().del(...found);
    then?.(multi);
    await multi.exec();
  }

  const entries = async (prefix: string) => (await client().xrange(logKeys(prefix, 1).stream(0), '-', '+')).map(([, fields]) => (JSON.parse(fields[fields.indexOf('e') + 1]!) as { id: number }).id);

  it('appends its recent entries again, each once to every reader, again at each start-over, and says how many went in', async () => {
    const prefix = `over-${Date.now()}:`;
    const here = await open(prefix);
    const there = await open(prefix);
    const at = '2026-01-01T10:00:00.000Z';
    expect(await here.log.append(webhook(1, 1, at))).toBe('accepted');
    expect(await here.log.append(webhook(2, 2, at))).toBe('accepted');
    expect(await here.log.appendSnapshot({ ...webhook(0, 3, at), current: true, origin: 'snapshot' }, Date.parse(at))).toBe(true);
    await eventually(async () => there.got.length, (count) => count === 3);

    await emptied(prefix);
    await eventually(async () => here.appendedAgain(), (told) => told.length === 1, 3_000);
    expect(here.appendedAgain()).toEqual([[50, 3, 0]]);
    // The other instance sees the log started over too, and had appended nothing lately.
    await eventually(async () => there.appendedAgain(), (told) => told.length === 1, 3_000);
    expect(there.appendedAgain()).toEqual([[50, 0, 0]]);
    expect(await entries(prefix)).toEqual([1, 2, 0]);
    // Kept for the next start-over: emptied again, they go in again.
    await emptied(prefix);
    await eventually(async () => here.appendedAgain(), (told) => told.length === 2, 3_000);
    expect(here.appendedAgain()[1]).toEqual([50, 3, 0]);
    expect(await entries(prefix)).toEqual([1, 2, 0]);
    await sleep(300);
    // Nobody had a webhook twice: the appender's reader skips them, the other drops what it delivered. A snapshot
    // (all id 0) read again is no state change there.
    for (const side of [here, there]) {
      expect(side.got.filter((e) => e.id !== 0).map((e) => e.id)).toEqual([1, 2]);
      expect(side.got.filter((e) => e.current).map((e) => e.id)).toEqual([1, 2, 0]);
    }
  });

  it('counts the appends that fail and keeps them for the next start-over; drops one the log still holds', async () => {
    const prefix = `over-fail-${Date.now()}:`;
    const here = await open(prefix);
    const at = '2026-01-01T10:00:00.000Z';
    await here.log.append(webhook(1, 1, at));
    await here.log.append(webhook(2, 2, at));
    // Emptied, and a key of another type where the stream goes: each append again is refused.
    const stream = logKeys(prefix, 1).stream(0);
    await emptied(prefix, (multi) => multi.set(stream, 'not a stream'));
    await eventually(async () => here.appendedAgain(), (told) => told.length === 1, 3_000);
    expect(here.appendedAgain()).toEqual([[50, 0, 2]]);
    // Emptied again: the two it could not append go in now.
    await emptied(prefix);
    await eventually(async () => here.appendedAgain(), (told) => told.length === 2, 3_000);
    expect(here.appendedAgain()[1]).toEqual([50, 2, 0]);
    expect(await entries(prefix)).toEqual([1, 2]);
    // Only the epoch lost: the claims still hold them, so nothing goes in and they are not kept.
    await client().del(logKeys(prefix, 1).epoch());
    await eventually(async () => here.appendedAgain(), (told) => told.length === 3, 3_000);
    expect(await entries(prefix)).toEqual([1, 2]);
    await emptied(prefix);
    await eventually(async () => here.appendedAgain(), (told) => told.length === 4, 3_000);
    expect(here.appendedAgain()[3]).toEqual([50, 0, 0]);
    expect(await entries(prefix)).toEqual([]);
    expect(here.got.map((e) => e.id)).toEqual([1, 2]);
  });
});
