#!lua
--[[
  Admits one model call under a shared provider limit, or keeps it waiting in a fair queue.
  Calls wait in one line ordered by their start tag (start-time fair queueing): a tenant's next
  call starts at `max(served, where its last call finished)`, where `served` is the start tag
  of the call admitted last and a call finishes `1 / share` after its start. Tenants are served
  in turn (in proportion to their shares) whatever each one has waiting, within a tenant first
  come first served, and a tenant with nothing waiting goes ahead of a backlog's next call (it
  starts at `served`, the backlog's next one after it). Whoever asks admits, fairest first,
  every waiting call the limit has room for now (a sliding window log: no window of `window` ms ever holds more requests or
  tokens than the limit), unless the provider's last 429 pauses the limit. A limit of at least
  20 calls a window is also paced (GCRA): admissions are spread at 97 % of its rate with a
  burst of about 2 % of the window, so one tenant's burst never fills a window at once and locks the
  other tenants out until it leaves it; a backlog leaves a call's room of that burst to
  tenants with nothing waiting, whose calls go at once. A call admitted by
  another's ask confirms when it asks again; its send time is then counted from that moment.
  A call admitted before a pause that it had not confirmed goes back to the head of the line.

  Input:
    KEYS[1] calls (ZSET admitted call id → when it was sent, ms, Redis' clock)
    KEYS[2] tokens (HASH admitted call id → tokens reserved)
    KEYS[3] paused until (STRING, ms)
    KEYS[4] waiting (ZSET waiting call id → its fair-share tag)
    KEYS[5] wants (HASH waiting call id → the tokens it asks for; `~<id>` → its tenant, when
      it was queued with none of its tenant's calls waiting)
    KEYS[6] clock (HASH `v` → the largest start tag admitted, `t:<tenant>` → where a tenant's
      last call finishes, `w:<tenant>` → its last call's id, `p` → the pacing's theoretical
      arrival time, ms)

    ARGV[1] call id
    ARGV[2] tokens to reserve (capped at the token limit)
    ARGV[3] requests per window (0: none)
    ARGV[4] tokens per window (0: none)
    ARGV[5] window ms
    ARGV[6] the call's tenant
    ARGV[7] the tenant's share (a number above 0; 1 by default)

  Output:
    0 when the call may be sent now; else the ms to wait before asking again (the head of the
    line: until the limit has room for it; others: later, by their place in line, at most a
    window later)
]]
local calls, tokens, pausedKey, waiting, wants, clock =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id = ARGV[1]
local want, maxRequests, maxTokens = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local window = tonumber(ARGV[5])
local tenant, share = ARGV[6], tonumber(ARGV[7])
if maxTokens > 0 and want > maxTokens then want = maxTokens end

-- Calls out of every window from now on are forgotten.
local old = redis.call('ZRANGEBYSCORE', calls, '-inf', now - window, 'LIMIT', 0, 1000)
if #old > 0 then
  redis.call('HDEL', tokens, unpack(old))
  redis.call('ZREM', calls, unpack(old))
end

local paused = tonumber(redis.call('GET', pausedKey) or '0')
local served = tonumber(redis.call('HGET', clock, 'v') or '0')

local function keepKeys()
  local keep = math.max(0, paused - now) + 2 * window + 60000
  for _, key in ipairs({calls, tokens, waiting, wants, clock}) do
    redis.call('PEXPIRE', key, keep)
  end
end

-- An admitted call confirms: sent now, or back at the head of the line when a pause came first.
local admittedAt = redis.call('ZSCORE', calls, id)
if admittedAt then
  if paused <= now then
    redis.call('ZADD', calls, now, id)
    keepKeys()
    return 0
  end
  local reserved = redis.call('HGET', tokens, id) or want
  redis.call('ZREM', calls, id)
  redis.call('HDEL', tokens, id)
  -- Ahead of the head, and of a newcomer's call (which starts at `served`).
  local first = redis.call('ZRANGE', waiting, 0, 0, 'WITHSCORES')
  redis.call('ZADD', waiting, math.min(served, tonumber(first[2] or served)) - 1, id)
  redis.call('HSET', wants, id, reserved)
end

-- A new call takes its place in line after its tenant's last one. Queued with none of its
-- tenant's calls waiting (`light`, marked `~<id>` in `wants`), it sorts just before a
-- backlog's call of the same start tag: a tenant with nothing waiting wins the tie.
local TIE = 1e-6
if not redis.call('ZSCORE', waiting, id) then
  local finished = tonumber(redis.call('HGET', clock, 't:' .. tenant) or '0')
  local start = math.max(served, finished)
  local previous = redis.call('HGET', clock, 'w:' .. tenant)
  local behind = previous and redis.call('ZSCORE', waiting, previous)
  redis.call('HSET', clock, 't:' .. tenant, start + 1 / share, 'w:' .. tenant, id)
  redis.call('HSET', wants, id, want)
  if behind then
    redis.call('ZADD', waiting, start, id)
  else
    redis.call('ZADD', waiting, start - TIE, id)
    redis.call('HSET', wants, '~' .. id, tenant)
  end
end

-- Pacing: the ms each admission of `need` tokens moves the pacing clock on (0: not paced).
local PACED_SHARE, MIN_PACED_CALLS = 0.97, 20
local tolerance = window * (1 - PACED_SHARE) * 0.8
local function paceCost(need)
  local cost = 0
  if maxRequests >= MIN_PACED_CALLS then cost = window / (maxRequests * PACED_SHARE) end
  if maxTokens > 0 and need > 0 and maxTokens >= MIN_PACED_CALLS * need then
    cost = math.max(cost, need * window / (maxTokens * PACED_SHARE))
  end
  return cost
end
local pacedAt = tonumber(redis.call('HGET', clock, 'p') or '0')

-- The ms until the window holds room for one more call of `need` tokens (0 or less: now).
-- A call of a tenant with nothing else waiting (`light`) may use the whole burst; a backlog's call leaves one call's room of it (at most half), so a
-- newcomer's call goes at once, however long the backlog, and the backlog's rate is the same.
local function untilRoom(need, light)
  local waitMs = 0
  local cost = paceCost(need)
  if cost > 0 then
    if light then
      waitMs = pacedAt - tolerance - 1 - now
    else
      waitMs = pacedAt - (tolerance - math.min(cost, tolerance / 2)) - now
    end
  end
  local count = redis.call('ZCARD', calls)
  if maxRequests > 0 and count >= maxRequests then
    local leaving = redis.call('ZRANGE', calls, count - maxRequests, count - maxRequests, 'WITHSCORES')
    waitMs = tonumber(leaving[2]) + window - now
  end
  if maxTokens > 0 and count > 0 then
    local page = redis.call('ZRANGE', calls, 0, -1, 'WITHSCORES')
    local ids = {}
    for i = 1, #page, 2 do ids[#ids + 1] = page[i] end
    local amounts = redis.call('HMGET', tokens, unpack(ids))
    local sum = 0
    for i = 1, #ids do sum = sum + tonumber(amounts[i] or '0') end
    -- Oldest first, the calls that must leave the window before it has room.
    local i = 1
    while sum + need > maxTokens and i <= #ids do
      sum = sum - tonumber(amounts[i] or '0')
      waitMs = math.max(waitMs, tonumber(page[2 * i]) + window - now)
      i = i + 1
    end
  end
  return waitMs
end

-- Whether waiting call `waitingId` (its score `score`) may use the whole burst (see
-- `untilRoom`): queued with none of its tenant's calls waiting, and none queued since; and its
-- start tag.
local function lightAndStart(waitingId, score)
  local tag = tonumber(score)
  local marked = redis.call('HGET', wants, '~' .. waitingId)
  if not marked then return false, tag end
  return redis.call('HGET', clock, 'w:' .. marked) == waitingId, tag + TIE
end

-- Whoever asks admits, fairest first, every waiting call there is room for now.
local admitted = false
if paused <= now then
  for _ = 1, 10000 do
    local head = redis.call('ZRANGE', waiting, 0, 0, 'WITHSCORES')
    if #head == 0 then break end
    local need = tonumber(redis.call('HGET', wants, head[1]) or '0')
    local light, start = lightAndStart(head[1], head[2])
    if untilRoom(need, light) > 0 then break end
    redis.call('ZREM', waiting, head[1])
    redis.call('HDEL', wants, head[1], '~' .. head[1])
    redis.call('ZADD', calls, now, head[1])
    redis.call('HSET', tokens, head[1], need)
    local cost = paceCost(need)
    if cost > 0 then
      pacedAt = math.max(pacedAt, now) + cost
      redis.call('HSET', clock, 'p', pacedAt)
    end
    if start > served then
      served = start
      redis.call('HSET', clock, 'v', served)
    end
    if head[1] == id then admitted = true end
  end
end
keepKeys()
if admitted then return 0 end

-- Still waiting: the head asks again once there is room; the others by their place in line.
local rank = redis.call('ZRANK', waiting, id)
local head = redis.call('ZRANGE', waiting, 0, 0, 'WITHSCORES')
local headNeed = tonumber(redis.call('HGET', wants, head[1]) or '0')
local headWait = math.max(paused - now, untilRoom(headNeed, (lightAndStart(head[1], head[2]))))
local perCall = 0
if maxRequests > 0 then perCall = window / maxRequests end
if maxTokens > 0 then perCall = math.max(perCall, want * window / maxTokens) end
local later = math.min(rank * perCall, window)
return math.max(1, math.ceil(headWait + later))
