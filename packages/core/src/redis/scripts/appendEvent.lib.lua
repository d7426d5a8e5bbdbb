--[[
  Included (`-- @include appendEvent`) by every script that stores an event: publishEvent-1,
  publishEvents-1, sessionWrites-8, finishRun, decideApproval-4 and appendHandoff-5.

  appendEvent numbers an event, appends it to the session's replay stream and publishes it.
  The stream entry id is `<seq>-1`, which makes "every event after seq N" one XRANGE; `seq` is
  spliced into the JSON text so nothing here re-encodes the payload. The stream is the counter:
  the next number is the newest entry's plus one (the newest entry is never trimmed, and every
  number taken is stored, so this is the number an INCR of a counter would have given). The
  session's `seq` key, the counter of earlier versions, is neither written nor read.

  The stream is capped twice: at about `maxLen` entries (XADD MAXLEN ~), and at `maxBytes`
  bytes of event JSON. For the second, each entry keeps beside its event ('e') the running
  total of event bytes appended to the stream so far ('b'): the stream holds the newest total
  minus the total before its oldest entry. Past the budget, the oldest entries are trimmed
  (XTRIM MINID), reading one entry per entry removed; the newest entry always stays. Entries
  written before the budget existed carry no total and are the first to go.

  A script that stores several events opens them at once: openEvents(stream key) reads the
  stream's newest entry once (XREVRANGE), for the latest number and the byte total, and
  appendNextEvent(events, …) stores each in turn, numbering and adding up from there. The
  stream and the numbers see exactly what one appendEvent per event would have made them see,
  in two commands per event (XADD, PUBLISH) and one per script instead of three per event.

  A caller that knows what the newest entry should be (a coordinator that stored the
  session's last events itself, state/streamTails.ts) passes it as a guess, `<seq>:<total>`,
  and the stream is not read: the first event is added with the id that follows the guess,
  which Redis refuses when the stream's newest entry is that id or past it (another writer
  stored events since: a worker's partial result, a decision, a child run's events at its
  root). Refused, the script reads the newest entry and numbers from it, as without a guess.
  A live event met before any stored one proved the guess reads the newest entry first: its
  number is always the stored one. A guess can only be wrong low, never high, unless events
  the caller sent were lost (a failed script, a failover): the next number then skips, which
  readers take as they take a trimmed stream's gap.

  A script that opens its events with openBatch(stream key) publishes them at its end, in
  one message (publishBatch(events, channel)): the events' JSON texts in order, one a line
  (joined by "\n"; an event's JSON never holds a raw newline). Readers split a message at its
  newlines (state/sessionEventHub.ts), so a batch of n events costs one PUBLISH instead of n,
  and its events reach a subscriber in the order they were stored. The batch's events are
  stored alike: one stream entry holds them all, their texts one a line in 'e', its id the
  number of its last event (`<last seq>-1`, so the newest entry's id is still the latest
  number, and "every event after seq N" is still the entries after `N-1`, whose first may
  begin with events up to N: readers skip them, state/streamEntries.ts), and 'b' the running
  total after its last event. The entry is added by publishBatch, so a batch of n events costs
  one XADD instead of n; an entry holds up to 16 KiB of events (ENTRY_BYTES: a larger batch
  takes more entries, a larger event one of its own), so the byte cap below trims as finely as
  before. With a guess, the first event is stored alone first, as the guess's
  proof (an entry that held more would carry a later id, which Redis could accept over another
  writer's newer entry): two XADDs for the batch. A live event of a batch met while the guess
  is unproved is numbered when the proof comes (the number is the guess, or the newest entry's
  when Redis refused it), not by reading the stream first; a batch that stores nothing after it
  reads the newest entry at its end, as before.

  appendEvent(stream key, channel, event JSON without seq, max length, max bytes)
  returns the event's number.
  openEvents(stream key, guess or nil) returns the script's events: `seq`, the latest number
  stored so far (0 for a session without events), and `total`, the stream's byte total; with a
  guess (`<seq>:<total>`, '' for none) they are the guess, proved by the first event stored.
  appendNextEvent(events, stream key, channel, event JSON without seq, max length, max bytes)
  stores the next event and returns its number.
  openBatch(stream key, guess or nil) is openEvents whose events are published by publishBatch.
  publishLive(events, channel, event JSON without seq, stream key) publishes a live-only event
  with the latest number (`live: true`), or adds it to the batch.
  publishBatch(events, channel) stores the batch's events not yet stored as one entry and
  publishes the batch's events in one message, if it has any; every script that opens a batch
  calls it before it returns.
]]
local function entryField(entry, name)
  local fields = entry[2]
  for i = 1, #fields, 2 do
    if fields[i] == name then return fields[i + 1] end
  end
  return nil
end

-- The total of event bytes appended before this entry (-1 for an entry without a total). An
-- entry's texts are joined by newlines, which the totals do not count.
local function bytesBefore(entry)
  local total = tonumber(entryField(entry, 'b'))
  if not total then return -1 end
  local texts = entryField(entry, 'e') or ''
  local _, newlines = string.gsub(texts, '\n', '')
  return total - (#texts - newlines)
end

local function trimToBytes(stream, total, maxBytes, newestId)
  if total <= maxBytes then return end
  local floor = total - maxBytes
  local keep = newestId
  local from = '-'
  while true do
    local entry = redis.call('XRANGE', stream, from, '+', 'COUNT', 1)[1]
    if not entry or entry[1] == newestId then break end
    if bytesBefore(entry) >= floor then
      keep = entry[1]
      break
    end
    from = '(' .. entry[1]
  end
  redis.call('XTRIM', stream, 'MINID', keep)
end

-- Sets `events` to the stream's newest entry: its number and byte total (0, 0 for none).
local function readNewest(events, stream)
  events.guessed = nil
  local last = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)[1]
  if not last then
    events.seq, events.total = 0, 0
    return events
  end
  events.seq = tonumber(string.match(last[1], '^%d+'))
  events.total = tonumber(entryField(last, 'b')) or 0
  return events
end

local function openEvents(stream, guess)
  local seq, total = string.match(guess or '', '^(%d+):(%d+)$')
  if seq then return { seq = tonumber(seq), total = tonumber(total), guessed = true } end
  return readNewest({}, stream)
end

-- Numbers the live events of the batch met while its guess was unproved: each carries the
-- number of the newest stored event before it, which `events.seq` is now.
local function numberUnprovedLive(events)
  for _, live in ipairs(events.unnumbered or {}) do
    events.batch[live.at] = '{"seq":' .. events.seq .. ',"live":true,' .. string.sub(live.json, 2)
  end
  events.unnumbered = nil
end

local function addEntry(stream, maxLen, maxBytes, seq, texts, total)
  local id = seq .. '-1'
  redis.call('XADD', stream, 'MAXLEN', '~', maxLen, id, 'e', texts, 'b', total)
  trimToBytes(stream, total, tonumber(maxBytes), id)
end

-- A batch's entry holds events up to this many bytes (a larger event has an entry of its own),
-- so the byte cap trims about as finely as with one entry per event.
local ENTRY_BYTES = 16384

-- Stores the batch's events not yet stored as one entry.
local function addBatchEntry(events)
  if #events.entry == 0 then return end
  addEntry(events.stream, events.maxLen, events.maxBytes, events.seq, table.concat(events.entry, '\n'), events.total)
  events.entry, events.entryBytes = {}, 0
end

local function appendNextEvent(events, stream, channel, eventJson, maxLen, maxBytes)
  local seq = events.seq + 1
  local msg = '{"seq":' .. seq .. ',' .. string.sub(eventJson, 2)
  local total = events.total + #msg
  if events.guessed then
    local id = seq .. '-1'
    local added = redis.pcall('XADD', stream, 'MAXLEN', '~', maxLen, id, 'e', msg, 'b', total)
    if type(added) == 'table' and added.err then
      -- The newest entry is at `id` or past it: another writer stored events since the guess.
      readNewest(events, stream)
      if events.batch then numberUnprovedLive(events) end
      return appendNextEvent(events, stream, channel, eventJson, maxLen, maxBytes)
    end
    events.guessed = nil
    if events.batch then numberUnprovedLive(events) end
    trimToBytes(stream, total, tonumber(maxBytes), id)
  elseif events.batch then
    -- Stored with the rest of the batch, as one entry, by publishBatch.
    if events.entryBytes + #msg > ENTRY_BYTES then addBatchEntry(events) end
    table.insert(events.entry, msg)
    events.entryBytes = events.entryBytes + #msg
    events.maxLen, events.maxBytes = maxLen, maxBytes
  else
    addEntry(stream, maxLen, maxBytes, seq, msg, total)
  end
  events.seq, events.total = seq, total
  if events.batch then
    table.insert(events.batch, msg)
  else
    redis.call('PUBLISH', channel, msg)
  end
  return seq
end

local function openBatch(stream, guess)
  local events = openEvents(stream, guess)
  events.batch = {}
  events.entry, events.entryBytes = {}, 0
  events.stream = stream
  return events
end

local function publishLive(events, channel, eventJson, stream)
  if events.guessed and events.batch then
    -- Numbered once the guess is proved (numberUnprovedLive): no read of the stream for it.
    table.insert(events.batch, '')
    events.unnumbered = events.unnumbered or {}
    table.insert(events.unnumbered, { at = #events.batch, json = eventJson })
    return
  end
  -- A live event carries the stored number: a guess no event has proved yet is read first.
  if events.guessed then readNewest(events, stream) end
  local msg = '{"seq":' .. events.seq .. ',"live":true,' .. string.sub(eventJson, 2)
  if events.batch then
    table.insert(events.batch, msg)
  else
    redis.call('PUBLISH', channel, msg)
  end
end

local function publishBatch(events, channel)
  if not events.batch then return end
  addBatchEntry(events)
  if events.unnumbered then
    -- No stored event proved the guess: its live events take the newest entry's number.
    readNewest(events, events.stream)
    numberUnprovedLive(events)
  end
  if #events.batch > 0 then
    redis.call('PUBLISH', channel, table.concat(events.batch, '\n'))
  end
end

local function appendEvent(stream, channel, eventJson, maxLen, maxBytes)
  return appendNextEvent(openEvents(stream), stream, channel, eventJson, maxLen, maxBytes)
end
