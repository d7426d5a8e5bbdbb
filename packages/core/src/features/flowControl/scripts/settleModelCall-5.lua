#!lua
--[[
  Settles one model call of a shared provider limit: corrects its tokens by what the answer
  reported (with "tokensFromNow", also counts it from now on, its answer, instead of its turn:
  a call sent at once, never confirmed, may have reached the provider well after its turn),
  cancels it (its wait was aborted: never sent), or records that the provider
  refused it (no tokens) and pauses every call of the limit until `pause` ms from now.

  Input:
    KEYS[1] calls (ZSET admitted call id → when it was sent, ms)
    KEYS[2] tokens (HASH admitted call id → tokens reserved)
    KEYS[3] paused until (STRING, ms)
    KEYS[4] waiting (ZSET waiting call id → its fair-share tag)
    KEYS[5] wants (HASH waiting call id → the tokens it asks for, and `~<id>` fields)

    ARGV[1] call id
    ARGV[2] what: "tokens", "tokensFromNow", "cancel" or "refused"
    ARGV[3] the tokens the answer reported ("tokens"), or the pause in ms ("refused", 0: none)
    ARGV[4] window ms (how long a pause is remembered past its end, and a call counted from now)

  Output:
    1
]]
local id, what, amount = ARGV[1], ARGV[2], tonumber(ARGV[3])
local known = redis.call('ZSCORE', KEYS[1], id)
if what == 'cancel' then
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[4], id)
  redis.call('HDEL', KEYS[5], id, '~' .. id)
  return 1
end
if what == 'tokens' or what == 'tokensFromNow' then
  if not known then return 1 end
  redis.call('HSET', KEYS[2], id, amount)
  if what == 'tokensFromNow' then
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    if now > tonumber(known) then redis.call('ZADD', KEYS[1], now, id) end
    local keep = tonumber(ARGV[4]) + 1000
    for i = 1, 2 do
      if redis.call('PTTL', KEYS[i]) < keep then redis.call('PEXPIRE', KEYS[i], keep) end
    end
  end
  return 1
end
if known then redis.call('HSET', KEYS[2], id, 0) end
if amount > 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local paused = tonumber(redis.call('GET', KEYS[3]) or '0')
  if now + amount > paused then
    redis.call('SET', KEYS[3], now + amount, 'PX', amount + tonumber(ARGV[4]))
  end
end
return 1
