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
  and its events reach a subscriber in the order they were stored.

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
  publishBatch(events, channel) publishes the batch's events in one message, if it has any.
]]
local function entryField(entry, name)
  local fields = entry[2]
  for i = 1, #fields, 2 do
    if fields[i] == name then return fields[i + 1] end
  end
  return nil
end

-- The total of event bytes appended before this entry (-1 for an entry without a total).
local function bytesBefore(entry)
  local total = tonumber(entryField(entry, 'b'))
  if not total then return -1 end
  return total - #(entryField(entry, 'e') or '')
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

local function appendNextEvent(events, stream, channel, eventJson, maxLen, maxBytes)
  local seq = events.seq + 1
  local msg = '{"seq":' .. seq .. ',' .. string.sub(eventJson, 2)
  local total = events.total + #msg
  local id = seq .. '-1'
  if events.guessed then
    events.guessed = nil
    local added = redis.pcall('XADD', stream, 'MAXLEN', '~', maxLen, id, 'e', msg, 'b', total)
    if type(added) == 'table' and added.err then
      -- The newest entry is at `id` or past it: another writer stored events since the guess.
      readNewest(events, stream)
      return appendNextEvent(events, stream, channel, eventJson, maxLen, maxBytes)
    end
  else
    redis.call('XADD', stream, 'MAXLEN', '~', maxLen, id, 'e', msg, 'b', total)
  end
  events.seq, events.total = seq, total
  trimToBytes(stream, total, tonumber(maxBytes), id)
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
  return events
end

local function publishLive(events, channel, eventJson, stream)
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
  if events.batch and #events.batch > 0 then
    redis.call('PUBLISH', channel, table.concat(events.batch, '\n'))
  end
end

local function appendEvent(stream, channel, eventJson, maxLen, maxBytes)
  return appendNextEvent(openEvents(stream), stream, channel, eventJson, maxLen, maxBytes)
end
