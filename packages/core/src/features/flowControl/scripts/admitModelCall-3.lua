--[[
  Admits one model call under a shared provider limit, or schedules it: the call's turn is the
  earliest time at or after the last one scheduled (first come, first served), after the
  provider's pause, when the window ending then holds room for one more request and for its
  tokens (a sliding window log: no window of `window` ms ever holds more). Called again with
  the same id once its turn came, it confirms the turn: the call's time becomes now (when it is
  really sent), and the window ending now must still hold it as the log is then (calls sent
  late, answers' usage above what they reserved), else it waits for the room; or schedules it
  anew after a pause set meanwhile (a 429 told by another coordinator).

  Input:
    KEYS[1] calls (ZSET call id → its turn, ms, Redis' clock)
    KEYS[2] tokens (HASH call id → tokens reserved)
    KEYS[3] paused until (STRING, ms)

    ARGV[1] call id
    ARGV[2] tokens to reserve (capped at the token limit)
    ARGV[3] requests per window (0: none)
    ARGV[4] tokens per window (0: none)
    ARGV[5] window ms

  Output:
    ms until the call's turn: 0 to send it now
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id = ARGV[1]
local want, maxRequests, maxTokens = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local window = tonumber(ARGV[5])

-- Calls out of every window from now on are forgotten.
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - window, 'LIMIT', 0, 1000)
if #old > 0 then
  redis.call('HDEL', KEYS[2], unpack(old))
  redis.call('ZREM', KEYS[1], unpack(old))
end

local paused = tonumber(redis.call('GET', KEYS[3]) or '0')
if maxTokens > 0 and want > maxTokens then want = maxTokens end

-- The earliest time at or after `at` when the window ending then holds room for one more
-- request and `want` tokens, counting the calls whose turn is at or before `at`. Newest first:
-- the first call that would overfill the window must leave it.
local function roomAt(at)
  if maxRequests == 0 and maxTokens == 0 then return at end -- only pauses are shared
  local count, sum, offset = 1, want, 0
  while true do
    local page = redis.call('ZREVRANGEBYSCORE', KEYS[1], at, '(' .. (at - window),
      'WITHSCORES', 'LIMIT', offset, 200)
    if #page == 0 then return at end
    local ids = {}
    for i = 1, #page, 2 do ids[#ids + 1] = page[i] end
    local amounts = redis.call('HMGET', KEYS[2], unpack(ids))
    for i = 1, #ids do
      count = count + 1
      sum = sum + tonumber(amounts[i] or '0')
      if (maxRequests > 0 and count > maxRequests) or (maxTokens > 0 and sum > maxTokens) then
        return math.max(at, tonumber(page[2 * i]) + window)
      end
    end
    offset = offset + #ids
  end
end

local keep = function(at)
  local ttl = at - now + window + 1000
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end

local turn = redis.call('ZSCORE', KEYS[1], id)
if turn then
  turn = tonumber(turn)
  local pausedBefore = paused > now and turn < paused
  if turn > now and not pausedBefore then return turn - now end
  redis.call('ZREM', KEYS[1], id)
  if not pausedBefore then
    -- Its turn came, and it is sent now: the window ending now, with every call at the time it
    -- was really sent and at the tokens its answer reported, must hold it too (a call sent
    -- late, or that used more than it reserved, may have taken its room). Else it waits for
    -- the room, in its place: the calls after it check the same when their turn comes.
    local at = roomAt(now)
    redis.call('ZADD', KEYS[1], at, id)
    keep(at)
    return at - now
  end
  redis.call('HDEL', KEYS[2], id) -- paused before its turn came: in line again
end

local last = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local at = math.max(now, paused)
if last[2] then at = math.max(at, tonumber(last[2])) end
at = roomAt(at)

redis.call('ZADD', KEYS[1], at, id)
redis.call('HSET', KEYS[2], id, want)
keep(at)
return at - now
