-- Runs one Argo CD resource customization (a health check, an action or action discovery) the way Argo CD's
-- Lua VM does, for the tests: the object arrives as JSON on stdin and becomes the global `obj` (JSON nulls
-- become absent keys, as Argo CD's conversion turns a Go nil into Lua nil), `actionParams` is an empty
-- table, the script's text is arg[1] (its name for messages arg[2]), and what it returns is printed as JSON
-- ("null" for nil). With arg[3] == "restricted" the script sees only the libraries Argo CD opens for a
-- script from argocd-cm without useOpenLibs: base, table, package and a safe part of os.
local cjson = require("cjson")

local function withoutNulls(value)
  if value == cjson.null then
    return nil
  end
  if type(value) == "table" then
    local out = {}
    for key, item in pairs(value) do
      out[key] = withoutNulls(item)
    end
    return out
  end
  return value
end

local input = io.read("*a")
local decoded, decodeError = pcall(cjson.decode, input)
if not decoded then
  io.stderr:write("the object on stdin is not JSON: ", tostring(decodeError), "\n")
  os.exit(2)
end
local object = withoutNulls(decodeError)

local chunk, loadError = loadstring(arg[1], "=" .. (arg[2] or "script"))
if not chunk then
  io.stderr:write(loadError, "\n")
  os.exit(2)
end

local globals = _G
if arg[3] == "restricted" then
  globals = {
    table = table,
    package = package,
    os = { time = os.time, date = os.date, clock = os.clock, difftime = os.difftime },
  }
  for _, name in ipairs({
    "assert", "error", "ipairs", "next", "pairs", "pcall", "print", "rawequal", "rawget", "rawset",
    "select", "setmetatable", "getmetatable", "tonumber", "tostring", "type", "unpack", "xpcall",
    "require", "_VERSION",
  }) do
    globals[name] = _G[name]
  end
  globals._G = globals
end
globals.obj = object
globals.actionParams = {}
setfenv(chunk, globals)

local ran, result = pcall(chunk)
if not ran then
  io.stderr:write(tostring(result), "\n")
  os.exit(3)
end
if result == nil then
  io.write("null")
else
  io.write(cjson.encode(result))
end
