/**
 * The Lua scripts behind `SessionStore`. Every write to a session checks the caller's lease
 * token first (fencing): a coordinator that lost the session can never write to it again.
 * Input ids are list elements and hash fields, never parsed or joined, so any id a BullMQ
 * job may have is safe; message JSON is written by the coordinator and never decoded here.
 */

/** KEYS: lease · ARGV: token, leaseMs → 1 acquired (or already ours), 0 held by another. */
export const ACQUIRE_LEASE = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

/** KEYS: lease · ARGV: token, leaseMs → 1 renewed, 0 lost. */
export const RENEW_LEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** KEYS: lease, pendingInputs, pendingFollowUps, run · ARGV: token → 1 released, 0 work is pending, -1 not ours. */
export const RELEASE_IF_IDLE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('EXISTS', KEYS[2], KEYS[3], KEYS[4]) > 0 then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

/** KEYS: lease · ARGV: token → 1 released, 0 not ours. Used to hand a session over. */
export const RELEASE_LEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

/**
 * KEYS: inputs, pendingInputs, pendingFollowUps, response · ARGV: inputId, kind (input |
 * followUp), message JSON, order (a number: the job's creation time, then arrival)
 * Records an input once, whatever how often its job is delivered: an input already answered
 * returns its response, one already known (waiting, or in the open run) changes nothing.
 * Waiting inputs are sorted sets ordered by `order`, so inputs fetched by different
 * coordinators still run in the order they were submitted.
 * → {2, response JSON} answered · {1} already known · {0} queued now.
 */
export const ENQUEUE_INPUT = `
local response = redis.call('GET', KEYS[4])
if response then return {2, response} end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[3]) == 0 then return {1} end
if ARGV[2] == 'followUp' then redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
else redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1]) end
return {0}
`;

/**
 * KEYS: lease, run, runInputs, inputs, pendingInputs, pendingFollowUps, messages
 * ARGV: token, newest follow-up order that may open a run now
 * Waiting plain inputs open a run before follow-ups (they were meant to join the run that
 * just ended). A follow-up newer than ARGV[2] does not open a run yet: an older input fetched
 * by another coordinator may still be on its way, and must run first.
 * → {-1} not ours · {0} nothing to do · {2, runId, inputId...} a run is open (resume)
 * · {1, runId, message} a new run, opened by input `runId` · {3, order} a follow-up waits
 * · {4} the open run is parked (waiting for approvals): the lease is released in the same step
 */
export const START_RUN = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {-1} end
if redis.call('HGET', KEYS[2], 'parked') == '1' then
  redis.call('DEL', KEYS[1])
  return {4}
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  local open = redis.call('LRANGE', KEYS[3], 0, -1)
  table.insert(open, 1, redis.call('HGET', KEYS[2], 'runId'))
  table.insert(open, 1, 2)
  return open
end
for _ = 1, 1000 do
  local head = redis.call('ZPOPMIN', KEYS[5])
  if #head == 0 then
    local oldest = redis.call('ZRANGE', KEYS[6], 0, 0, 'WITHSCORES')
    if #oldest == 0 then return {0} end
    if tonumber(oldest[2]) > tonumber(ARGV[2]) then return {3, oldest[2]} end
    head = redis.call('ZPOPMIN', KEYS[6])
  end
  local id = head[1]
  local message = redis.call('HGET', KEYS[4], id)
  if message then
    redis.call('RPUSH', KEYS[7], message)
    redis.call('HSET', KEYS[2], 'runId', id, 'order', head[2])
    redis.call('DEL', KEYS[3])
    redis.call('RPUSH', KEYS[3], id)
    return {1, id, message}
  end
end
return {0}
`;

/**
 * KEYS: lease, runInputs, inputs, pendingInputs, messages, run · ARGV: token
 * Moves the waiting plain inputs (not follow-ups) submitted after the open run's first input
 * into the transcript and the run; an older one (fetched late by another coordinator) waits
 * for a run of its own instead of joining one that started without it. Its cost grows with
 * the inputs it moves, never with the follow-ups that wait.
 * → {-1} not ours · {1, id, message, id, message, ...}
 */
export const DRAIN_INPUTS = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {-1} end
local opened = redis.call('HGET', KEYS[6], 'order') or '-inf'
local ids = redis.call('ZRANGEBYSCORE', KEYS[4], '(' .. opened, '+inf')
local moved = {1}
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[4], id)
  local message = redis.call('HGET', KEYS[3], id)
  if message then
    redis.call('RPUSH', KEYS[5], message)
    redis.call('RPUSH', KEYS[2], id)
    table.insert(moved, id)
    table.insert(moved, message)
  end
end
return moved
`;

/**
 * KEYS: lease, messages, running · ARGV: token, message JSON, tool call id or ''
 * Appends a message; a tool result also clears its call's "running here" mark.
 * → transcript length, or -1 not ours.
 */
export const APPEND_MESSAGE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if ARGV[3] ~= '' then redis.call('HDEL', KEYS[3], ARGV[3]) end
return redis.call('RPUSH', KEYS[2], ARGV[2])
`;

/**
 * KEYS: lease, run, runInputs, inputs, seq, events stream, messages, pendingInputs,
 *       pendingFollowUps, running, then one response key per input the run answers
 * ARGV: token, response JSON, response ttl s, responses channel, events channel, agentEnd
 *       event JSON (without seq), stream max length, session ttl s, JSON array of input ids
 * In one step: stores the run's response under every input id it answers, forgets those
 * inputs, publishes the run's `agentEnd` (numbered) on the bus, closes the run, announces
 * the ids on the responses channel, and sets the session's idle expiry. A watcher therefore
 * sees `agentEnd` exactly when the response is stored, even if the coordinator dies here.
 * Ids are never parsed here: they arrive as keys and as JSON built by the caller.
 * → 1, or -1 not ours.
 */
export const FINISH_RUN = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
for i = 11, #KEYS do redis.call('SET', KEYS[i], ARGV[2], 'EX', ARGV[3]) end
local ids = redis.call('LRANGE', KEYS[3], 0, -1)
for _, id in ipairs(ids) do redis.call('HDEL', KEYS[4], id) end
local seq = redis.call('INCR', KEYS[5])
local msg = '{"seq":' .. seq .. ',' .. string.sub(ARGV[6], 2)
redis.call('XADD', KEYS[6], 'MAXLEN', '~', ARGV[7], seq .. '-1', 'e', msg)
redis.call('PUBLISH', ARGV[5], msg)
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('PUBLISH', ARGV[4], ARGV[9])
for i = 4, 10 do redis.call('EXPIRE', KEYS[i], ARGV[8]) end
return 1
`;

/**
 * KEYS: lease, messages, running · ARGV: token, then pairs of (message JSON, tool call id or '')
 * Appends several messages in order in one step (a batch's tool results).
 * → transcript length, or -1 not ours.
 */
export const APPEND_MESSAGES = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local length = 0
for i = 2, #ARGV, 2 do
  if ARGV[i + 1] ~= '' then redis.call('HDEL', KEYS[3], ARGV[i + 1]) end
  length = redis.call('RPUSH', KEYS[2], ARGV[i])
end
return length
`;

/**
 * KEYS: lease, approvals, approvalsPending, approvalDeadlines
 * ARGV: token, call key, request JSON, `<sessionId> <callKey>`, requested at ms, deadline ms or ''
 * Records that a call awaits approval, once (a resumed batch finds it known).
 * → 1 recorded now, 0 already known, -1 not ours.
 */
export const REQUEST_APPROVAL = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 0 then return 0 end
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
if ARGV[6] ~= '' then redis.call('ZADD', KEYS[4], ARGV[6], ARGV[4]) end
return 1
`;

/**
 * KEYS: approvals, decisions, run, approvalsPending, approvalDeadlines
 * ARGV: call key, decision JSON, `<sessionId> <callKey>`
 * Records a human (or timeout) decision on a call awaiting approval, at most once. When no
 * undecided call remains, the run stops being parked (any coordinator may then resume it).
 * Not fenced: any coordinator records decisions; only a lease holder runs the call.
 * → {1} recorded, others wait · {2} recorded, the run may resume · {-1} the call does not
 * wait for approval · {-2, decision JSON} it was decided already.
 */
export const DECIDE_APPROVAL = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  redis.call('ZREM', KEYS[4], ARGV[3])
  redis.call('ZREM', KEYS[5], ARGV[3])
  return {-1}
end
local existing = redis.call('HGET', KEYS[2], ARGV[1])
if existing then
  redis.call('ZREM', KEYS[4], ARGV[3])
  redis.call('ZREM', KEYS[5], ARGV[3])
  return {-2, existing}
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[3])
redis.call('ZREM', KEYS[5], ARGV[3])
if redis.call('HLEN', KEYS[2]) >= redis.call('HLEN', KEYS[1]) then
  redis.call('HDEL', KEYS[3], 'parked')
  return {2}
end
return {1}
`;

/**
 * KEYS: lease, run, approvals, decisions, parkedResults
 * ARGV: token, then pairs of (call key, outcome JSON) of the batch's calls that finished
 * Stores the finished calls' outcomes (a resume reuses them), then, when a call still awaits
 * a decision, parks the run and releases the lease in the same step.
 * → 1 parked and released · 0 every call is decided already: resume now · -1 not ours.
 */
export const PARK_RUN = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1]) end
if redis.call('HLEN', KEYS[4]) >= redis.call('HLEN', KEYS[3]) then return 0 end
redis.call('HSET', KEYS[2], 'parked', '1')
redis.call('DEL', KEYS[1])
return 1
`;
