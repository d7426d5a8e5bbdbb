--[[
  Included (`-- @include appendEvent`) by every script that stores an event: publishEvent-2,
  publishEvents-2, sessionWrites-5, finishRun, decideApproval-5 and appendHandoff-6.

  appendEvent numbers an event, appends it to the session's replay stream and publishes it.
  The stream entry id is `<seq>-1`, which makes "every event after seq N" one XRANGE; `seq` is
  spliced into the JSON text so nothing here re-encodes the payload.

  The stream is capped twice: at about `maxLen` entries (XADD MAXLEN ~), and at `maxBytes`
  bytes of event JSON. For the second, each entry keeps beside its event ('e') the running
  total of event bytes appended to the stream so far ('b'): the stream holds the newest total
  minus the total before its oldest entry. Past the budget, the oldest entries are trimmed
  (XTRIM MINID), reading one entry per entry removed; the newest entry always stays. Entries
  written before the budget existed carry no total and are the first to go.

  appendEvent(seq key, stream key, channel, event JSON without seq, max length, max bytes)
  returns the event's number.
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

local function appendEvent(seqKey, stream, channel, eventJson, maxLen, maxBytes)
  local seq = redis.call('INCR', seqKey)
  local msg = '{"seq":' .. seq .. ',' .. string.sub(eventJson, 2)
  local last = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)[1]
  local total = #msg + (last and tonumber(entryField(last, 'b')) or 0)
  local id = seq .. '-1'
  redis.call('XADD', stream, 'MAXLEN', '~', maxLen, id, 'e', msg, 'b', total)
  trimToBytes(stream, total, tonumber(maxBytes), id)
  redis.call('PUBLISH', channel, msg)
  return seq
end
