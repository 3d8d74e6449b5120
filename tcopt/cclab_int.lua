-- SPDX-License-Identifier: GPL-2.0
--
-- Wireshark dissector for the cclab INT TCP option. The wire format, units
-- and wrap-around are specified in tcopt/README.md; this file only shows it.
--
--   tshark -X lua_script:tcopt/cclab_int.lua -r run.pcap -V
--
-- It takes over TCP option kind 253 (RFC 6994 experiments) and hands any
-- option with another ExID back to Wireshark's own experimental dissector.

local EXID = 0xCC1A
local BASE_LEN, REC_LEN, MAX_HOPS = 5, 7, 5
local QLEN_UNIT, TX_UNIT, TS_UNIT = 128, 128, 256
local RATE_MBPS = { 10, 20, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000,
	10000, 20000, 25000, 40000, 50000, 100000, 200000, 400000, 800000 }

local p = Proto("cclab_int", "cclab INT telemetry")

local hdr_flags = {
	version  = ProtoField.uint8("cclab_int.version", "Version", base.DEC, nil, 0xc0),
	echo     = ProtoField.bool("cclab_int.echo", "Echo", 8, nil, 0x20),
	overflow = ProtoField.bool("cclab_int.overflow", "Overflow", 8, nil, 0x10),
	-- v1 only (TCD): a port on the path was undetermined and did not mark CE
	ue       = ProtoField.bool("cclab_int.ue", "Undetermined (U)", 8, nil, 0x08),
	-- 4 bits in v0, 3 in v1: shown as decoded
	hops     = ProtoField.uint8("cclab_int.hops", "Hop count", base.DEC),
}
local f = {
	kind     = ProtoField.uint8("cclab_int.kind", "Kind", base.DEC),
	len      = ProtoField.uint8("cclab_int.len", "Length", base.DEC),
	exid     = ProtoField.uint16("cclab_int.exid", "ExID", base.HEX),
	header   = ProtoField.uint8("cclab_int.header", "Header", base.HEX),
	slots    = ProtoField.uint8("cclab_int.slots", "Record slots", base.DEC),
	record   = ProtoField.bytes("cclab_int.record", "Record"),
	rate_code = ProtoField.uint8("cclab_int.rate_code", "Rate code", base.DEC),
	rate     = ProtoField.uint32("cclab_int.rate", "Rate (Mbit/s)", base.DEC),
	qlen     = ProtoField.uint32("cclab_int.qlen", "Queue length (bytes)", base.DEC),
	tx_bytes = ProtoField.uint32("cclab_int.tx_bytes", "txBytes (bytes, mod 32 MiB)", base.DEC),
	ts       = ProtoField.uint32("cclab_int.ts", "Timestamp (ns, mod 67.1 ms)", base.DEC),
	valid    = ProtoField.bool("cclab_int.valid", "Valid record"),
}
local all = {}
for _, v in pairs(f) do all[#all + 1] = v end
for _, v in pairs(hdr_flags) do all[#all + 1] = v end
p.fields = all

local e_len = ProtoExpert.new("cclab_int.bad_len", "Length is not 5 + 7 x slots (0..5): not a cclab INT option",
	expert.group.MALFORMED, expert.severity.WARN)
local e_hops = ProtoExpert.new("cclab_int.bad_hops", "Hop count exceeds the record slots: option ignored by readers",
	expert.group.MALFORMED, expert.severity.WARN)
local e_version = ProtoExpert.new("cclab_int.bad_version", "Unknown version: option ignored by readers",
	expert.group.MALFORMED, expert.severity.WARN)
local e_rate = ProtoExpert.new("cclab_int.bad_rate", "Rate code 0 or above 20: record ignored by readers",
	expert.group.PROTOCOL, expert.severity.NOTE)
p.experts = { e_len, e_hops, e_version, e_rate }

local options = DissectorTable.get("tcp.option")
local experimental = options:get_dissector(253)

local function record(tvb, tree, i)
	local r = tvb(0, REC_LEN)
	local v = r:uint64()
	local code = v:rshift(51):band(0x1f):tonumber()
	local qlen = v:rshift(36):band(0x7fff):tonumber() * QLEN_UNIT
	local tx = v:rshift(18):band(0x3ffff):tonumber() * TX_UNIT
	local ts = v:band(0x3ffff):tonumber() * TS_UNIT
	local mbps = RATE_MBPS[code]
	local rt = tree:add(f.record, r)
	rt:set_text(string.format("Hop %d: %s, qlen %d B, txBytes %d B, ts %d ns", i,
		mbps and (mbps .. " Mbit/s") or ("bad rate code " .. code), qlen, tx, ts))
	rt:add(f.rate_code, r(0, 1), code)
	local ri = rt:add(f.rate, r(0, 1), mbps or 0)
	ri:set_generated()
	rt:add(f.qlen, r(0, 3), qlen)
	rt:add(f.tx_bytes, r(2, 3), tx)
	rt:add(f.ts, r(4, 3), ts)
	local vi = rt:add(f.valid, r(0, 1), mbps ~= nil)
	vi:set_generated()
	if not mbps then
		rt:add_proto_expert_info(e_rate)
	end
end

function p.dissector(tvb, pinfo, tree)
	if tvb:len() < 4 or tvb(2, 2):uint() ~= EXID then
		if experimental then
			return experimental:call(tvb, pinfo, tree)
		end
		return 0
	end
	local l = tvb(1, 1):uint()
	local t = tree:add(p, tvb(0, tvb:len()))
	t:add(f.kind, tvb(0, 1))
	t:add(f.len, tvb(1, 1))
	t:add(f.exid, tvb(2, 2))
	local slots = (l - BASE_LEN) / REC_LEN
	if l < BASE_LEN or l > BASE_LEN + MAX_HOPS * REC_LEN or (l - BASE_LEN) % REC_LEN ~= 0
		or tvb:len() < l then
		t:add_proto_expert_info(e_len)
		return tvb:len()
	end
	local h = tvb(4, 1)
	local ht = t:add(f.header, h)
	local hdr = h:uint()
	local version = math.floor(hdr / 64)
	-- v0: VV E O HHHH; v1: VV E O U HHH (tcopt/README.md)
	local hops = version == 1 and hdr % 8 or hdr % 16
	local ue = version == 1 and math.floor(hdr / 8) % 2 == 1
	for _, k in ipairs({ "version", "echo", "overflow" }) do
		ht:add(hdr_flags[k], h)
	end
	if version == 1 then
		ht:add(hdr_flags.ue, h)
	end
	ht:add(hdr_flags.hops, h, hops)
	local si = t:add(f.slots, tvb(1, 1), slots)
	si:set_generated()
	local echo = math.floor(hdr / 32) % 2 == 1
	local ovfl = math.floor(hdr / 16) % 2 == 1
	t:append_text(string.format(": %s, %d of %d hops%s%s", echo and "echo" or "forward",
		hops, slots, ovfl and ", overflow" or "", ue and ", undetermined" or ""))
	if version > 1 then
		t:add_proto_expert_info(e_version)
		return l
	end
	if hops > slots then
		t:add_proto_expert_info(e_hops)
		return l
	end
	for i = 0, hops - 1 do
		record(tvb(BASE_LEN + i * REC_LEN, REC_LEN):tvb(), t, i)
	end
	pinfo.cols.info:append(string.format(" INT=%s/%d%s", echo and "echo" or "fwd", hops, ue and "/U" or ""))
	return l
end

options:add(253, p)
