"""The Lua scripts of apps/leaderboards/ranks.py (its docstring describes the keys): each call
is atomic in Redis, so a rank is read, or a member replaced, without another process's change
in between."""

# KEYS: 1 set, 2 hash, 3 pending, 4 build lock, 5 epoch

READY = """
local epoch = redis.call('GET', KEYS[5]) or '0'
local function ready()
  return redis.call('EXISTS', KEYS[1]) == 1 and redis.call('HGET', KEYS[2], '~') == epoch
end
local function replace(z, h, user, m)
  local cur = redis.call('HGET', h, user)
  if cur then redis.call('ZREM', z, cur) end
  if m == '' then
    redis.call('HDEL', h, user)
  else
    redis.call('ZADD', z, 0, m)
    redis.call('HSET', h, user, m)
  end
end
-- Set a user's member ('' removes them): in the set when it is ready, and for the rebuild
-- when there is one under way or to come.
local function put(user, m)
  local is_ready = ready()
  if is_ready then replace(KEYS[1], KEYS[2], user, m) end
  if not is_ready or redis.call('EXISTS', KEYS[4]) == 1 then
    redis.call('RPUSH', KEYS[3], epoch .. ' ' .. user .. ' ' .. m)
    redis.call('EXPIRE', KEYS[3], 86400)
  end
end
"""

# ARGV: user, old member or '', new member or '', '1' when the old member is the truth (read
# under the user's lock: a member Redis holds that differs is set right first), '1' to move the
# user to the new member once read (the event's change, in the same call). The user's own
# member is left out: {ready, ahead of old, ahead of new, others, lowest other or ''}.
STANDING = (
    READY
    + """
if not ready() then return {0} end
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if ARGV[4] == '1' and (cur or '') ~= ARGV[2] then
  put(ARGV[1], ARGV[2])
  cur = redis.call('HGET', KEYS[2], ARGV[1])
end
local function ahead(m)
  if m == '' then return 0 end
  local n = redis.call('ZLEXCOUNT', KEYS[1], '-', '(' .. m)
  if cur and cur < m then n = n - 1 end
  return n
end
local others = redis.call('ZCARD', KEYS[1]) - 1
if cur then others = others - 1 end
local tail = redis.call('ZRANGE', KEYS[1], -3, -2)
local lowest = ''
for i = #tail, 1, -1 do
  if tail[i] ~= '~' and tail[i] ~= cur then lowest = tail[i] break end
end
local found = {1, ahead(ARGV[2]), ahead(ARGV[3]), others, lowest}
if ARGV[5] == '1' then put(ARGV[1], ARGV[3]) end
return found
"""
)

# ARGV: user, member ('' removes the user), repeated.
SET = (
    READY
    + """
for i = 1, #ARGV, 2 do put(ARGV[i], ARGV[i + 1]) end
return 1
"""
)

# ARGV: offset, count -> members in rank order, or {'~not-ready'}.
PAGE = (
    READY
    + """
if not ready() then return {'~not-ready'} end
local page = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[1] + ARGV[2] - 1)
if page[#page] == '~' then page[#page] = nil end
return page
"""
)

# ARGV: the build lock's token, '1' to rebuild a ready set too, the lock's seconds -> 2 when the
# set is ready (and not to be rebuilt), 1 when the lock is taken, 0 when another process has it.
# Checked and taken at once: a process that found the set missing and rebuilt it after another
# had (its set ready and taking changes without recording them) lost the changes of
# transactions in flight, which its read of PostgreSQL did not see yet.
CLAIM = (
    READY
    + """
if ARGV[2] ~= '1' and ready() then return 2 end
if redis.call('SET', KEYS[4], ARGV[1], 'NX', 'EX', ARGV[3]) then return 1 end
return 0
"""
)

# KEYS 6 and 7: the new set and hash, filled from PostgreSQL. ARGV: the build lock's token.
# Replays the changes recorded since the build began, then puts the new set in place.
FINISH = (
    READY
    + """
if redis.call('GET', KEYS[4]) ~= ARGV[1] then return 0 end
for _, op in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
  local e, user, m = string.match(op, '^(%S+) (%S+) ?(%S*)$')
  if e == epoch then replace(KEYS[6], KEYS[7], user, m) end
end
redis.call('ZADD', KEYS[6], 0, '~')
redis.call('HSET', KEYS[7], '~', epoch)
redis.call('RENAME', KEYS[6], KEYS[1])
redis.call('RENAME', KEYS[7], KEYS[2])
redis.call('PERSIST', KEYS[1])
redis.call('PERSIST', KEYS[2])
redis.call('DEL', KEYS[3], KEYS[4])
return 1
"""
)

# ARGV: user, k -> {'~not-ready'}; {} when the user has no member (not on the board); else
# {the user's 0-based place, the 0-based place of the first member shown, the members from k
# places above the user's to k below, in rank order}. ZRANK and ZRANGE by index: O(log n + k).
NEIGHBOURS = (
    READY
    + """
if not ready() then return {'~not-ready'} end
local m = redis.call('HGET', KEYS[2], ARGV[1])
if not m then return {} end
local place = redis.call('ZRANK', KEYS[1], m)
if not place then return {} end
local k = tonumber(ARGV[2])
local first = place - k
if first < 0 then first = 0 end
local window = redis.call('ZRANGE', KEYS[1], first, place + k)
if window[#window] == '~' then window[#window] = nil end
local found = {place, first}
for _, w in ipairs(window) do found[#found + 1] = w end
return found
"""
)
