#!lua
--[[
  Takes a client's abort request of the session (`abortRequested`: the id of the run to
  abort, see SessionStore.requestAbort) into its open run: a mark that names the open run
  marks it aborted, as markRunAborted-2 does; a mark naming another run (one that has ended)
  is dropped. Then says whether the open run is aborted. Not fenced: any coordinator may take
  it.

  Input:
    KEYS[1] run
    KEYS[2] abortRequested

  Output:
    1 the open run is aborted · 0 it is not, or no run is open
]]
local requested = redis.call('GET', KEYS[2])
if requested then
  redis.call('DEL', KEYS[2])
  if requested == redis.call('HGET', KEYS[1], 'runId') then
    redis.call('HSET', KEYS[1], 'aborted', '1')
  end
end
if redis.call('HGET', KEYS[1], 'aborted') == '1' then return 1 end
return 0
