--[[
  Looks for lives whose heartbeat ran out (Redis' clock). With `grace` 1 (the looking
  coordinator's connection to Redis came back within a ttl: Redis was away, no process could
  beat), every expired life gets a ttl to beat again instead, and none is reported. With
  `grace` 2 (the looking coordinator started within a ttl), the same only when this Redis has
  been up for less than a ttl (INFO `uptime_in_seconds`, read on the node holding the keys): a
  Redis up longer was there for every process to beat. Forgets lives found dead more than
  `keep` ms ago.

  Input:
    KEYS[1] alive (ZSET life id → alive until, ms)
    KEYS[2] dead (ZSET life id → found dead at, ms)

    ARGV[1] ttl ms
    ARGV[2] keep ms (how long a dead life is remembered)
    ARGV[3] most lives reported at once
    ARGV[4] grace: 1 to give every expired life a ttl more, 2 to do so only on a Redis up for
            less than a ttl, 0 to report them

  Output:
    { expired life ids (still in alive), lives found dead before (in dead) }
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[2]))
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local grace = ARGV[4]
if grace == '2' then
  local info = redis.call('INFO', 'server')
  local up = tonumber(string.match(info, 'uptime_in_seconds:(%d+)')) or 0
  if up * 1000 < ttl then grace = '1' end
end
if grace == '1' then
  for _, life in ipairs(expired) do redis.call('ZADD', KEYS[1], now + ttl, life) end
  expired = {}
end
return { expired, redis.call('ZRANGE', KEYS[2], 0, -1) }
