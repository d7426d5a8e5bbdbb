#!lua
--[[
  Looks for dead lives: those whose heartbeat ran out (Redis' clock), and those whose beats are
  `late` ms overdue while Redis holds no subscriber of their `lifeChannel` though they are
  `watched` (the process subscribed: Redis drops a subscription the moment the
  process's sockets close, as at a SIGKILL). Such a life's heartbeat is set to have run out
  now, so it is buried as any other (and stays alive if it beats again first). A stopped
  process (SIGSTOP) or one cut off keeps its subscription: only its ttl finds it.

  With `grace` 1 (the looking coordinator's connection to Redis came back within a ttl: Redis
  was away, no process could beat or subscribe), every expired life gets a ttl to beat again
  instead, and none is reported. With `grace` 2 (the looking coordinator started within a
  ttl), the same only when this Redis has been up for less than a ttl (INFO
  `uptime_in_seconds`, read on the node holding the keys): a Redis up longer was there for
  every process to beat. Forgets lives found dead more than `keep` ms ago.

  Input:
    KEYS[1] alive (ZSET life id → alive until, ms)
    KEYS[2] dead (ZSET life id → found dead at, ms)
    KEYS[3] watched (SET of life ids whose subscription tells whether they are connected)

    ARGV[1] ttl ms
    ARGV[2] keep ms (how long a dead life is remembered)
    ARGV[3] most lives reported at once
    ARGV[4] grace: 1 to give every expired life a ttl more, 2 to do so only on a Redis up for
            less than a ttl, 0 to report them
    ARGV[5] late ms: how overdue a watched life's beat is before its subscription is asked
            (0: never asked)
    ARGV[6] the life channels' prefix (`lifeChannel` without the life id)

  Output:
    { expired life ids (still in alive), lives found dead before (in dead) }
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local most = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[2]))
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, most)
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
local late = tonumber(ARGV[5])
if grace ~= '1' and late > 0 and #expired < most then
  local overdue = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, now + ttl - late, 'LIMIT', 0, most - #expired)
  for _, life in ipairs(overdue) do
    if redis.call('SISMEMBER', KEYS[3], life) == 1 then
      local subscribers = redis.call('PUBSUB', 'SHARDNUMSUB', ARGV[6] .. life)
      if tonumber(subscribers[2]) == 0 then
        redis.call('ZADD', KEYS[1], now, life)
        table.insert(expired, life)
      end
    end
  end
end
return { expired, redis.call('ZRANGE', KEYS[2], 0, -1) }
