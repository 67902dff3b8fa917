package gameplay

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// decode fills the typed instances and the document, block by block in
// slot order (the pvar table first: its length follows from the indices of
// mobies, cameras and sounds).
func (g *Gameplay) decode() {
	g.readPvarTable()
	doc := Obj{{"size", g.Size}}
	hdr := Obj{}
	for i, o := range g.Offsets {
		hdr.add(BlockNames[i], o)
	}
	doc.add("header", hdr)
	blocks := Obj{}
	for slot := 0; slot < NumBlocks; slot++ {
		k, ok := g.block(slot)
		if !ok {
			var v any // absent (offset 0)
			if o := int64(g.Offsets[slot]); o != 0 {
				v = Undecoded{Offset: int64(4 * slot), Bytes: g.b[4*slot : 4*slot+4], Reason: fmt.Sprintf("offset %#x outside the stream's blocks (%#x..%#x)", o, HeaderSize, g.Size)}
			}
			blocks.add(BlockNames[slot], v)
			continue
		}
		blocks.add(BlockNames[slot], g.decodeBlock(k))
	}
	doc.add("blocks", blocks)
	g.Doc = doc
}

func (g *Gameplay) decodeBlock(k blk) any {
	switch s := k.slot; {
	case s == slotLevelSettings:
		return k.levelSettings()
	case s == slotDirLights:
		return k.records(0x40, func(r int64) Obj {
			return Obj{{"colour_a", k.vec(r, 4)}, {"direction_a", k.vec(r+0x10, 4)}, {"colour_b", k.vec(r+0x20, 4)}, {"direction_b", k.vec(r+0x30, 4)}}
		})
	case s == slotCameras:
		return k.records(0x20, func(r int64) Obj {
			return Obj{{"type", k.s32(r)}, {"position", k.vec(r+4, 3)}, {"rotation", k.vec(r+0x10, 3)}, {"pvar_index", k.s32(r + 0x1c)}, {"pvar", g.pvarOf(k, r+0x1c)}}
		})
	case s == slotSounds:
		return k.records(0x90, func(r int64) Obj {
			return Obj{{"o_class", k.s16(r)}, {"m_class", k.s16(r + 2)}, {"update_function", k.u32(r + 4)}, {"pvar_index", k.s32(r + 8)},
				{"range", k.f32(r + 0xc)}, {"matrix", k.vec(r+0x10, 16)}, {"inverse_matrix", k.vec(r+0x50, 12)}, {"rotation", k.vec(r+0x80, 3)},
				{"pad", k.f32(r + 0x8c)}, {"pvar", g.pvarOf(k, r+8)}}
		})
	case s >= slotHelp0 && s < slotHelp0+8:
		return k.help()
	case s == slotTieClasses || s == slotShrubClasses || s == slotMobyClasses:
		return k.classList()
	case s == slotTieInstances:
		return k.ties()
	case s == slotShrubInstances:
		return k.shrubs()
	case s == slotMobyInstances:
		return k.mobies()
	case s == slotTieGroups:
		return k.groups(len(g.Ties))
	case s == slotShrubGroups:
		return k.groups(len(g.Shrubs))
	case s == slotMobyGroups:
		return k.groups(len(g.Mobies) + g.undecodedMobies)
	case s == slotSharedData:
		return k.sharedData()
	case s == slotPvarFixups || s == slotPvarPointers:
		return k.pairs()
	case s == slotPvarTable:
		return g.pvarTableDoc(k)
	case s == slotPvarData:
		return Obj{{"offset", k.off}, {"size", k.n()}, {"used", g.pvarDataUsed()}}
	case s >= slotCuboids && s <= slotPills:
		return k.records(0x80, func(r int64) Obj {
			return Obj{{"matrix", k.vec(r, 16)}, {"inverse_matrix", k.vec(r+0x40, 12)}, {"rotation", k.vec(r+0x70, 3)}, {"unused", k.f32(r + 0x7c)}}
		})
	case s == slotPaths:
		return k.paths(false)
	case s == slotGrindPaths:
		return k.paths(true)
	case s == slotPointLights:
		return k.pointLights()
	case s == slotEnvTransitions:
		return k.envTransitions()
	case s == slotCameraGrid:
		return k.cameraGrid()
	case s == slotEnvSamples:
		return k.records(0x20, func(r int64) Obj {
			return Obj{{"hero_light", k.s32(r)},
				{"position", Arr{float32(k.s16(r+4)) / 4, float32(k.s16(r+6)) / 4, float32(k.s16(r+8)) / 4}},
				{"reverb_depth", k.s16(r + 0xa)}, {"music_track", k.s16(r + 0xc)},
				{"fog_near_intensity", k.d[r+0xe]}, {"fog_far_intensity", k.d[r+0xf]},
				{"hero_colour", k.u8s(r+0x10, 3)}, {"reverb_type", k.d[r+0x13]}, {"reverb_delay", k.d[r+0x14]},
				{"reverb_feedback", k.d[r+0x15]}, {"enable_reverb_params", k.d[r+0x16]}, {"fog_colour", k.u8s(r+0x17, 3)},
				{"fog_near_dist", k.s16(r + 0x1a)}, {"fog_far_dist", k.s16(r + 0x1c)}, {"unused", k.u16(r + 0x1e)}}
		})
	case s == slotOcclusion:
		return k.occlusionMappings()
	case s == slotTieAmbient:
		return k.tieAmbient()
	case s == slotAreas:
		return k.areas()
	}
	return k.whole("no decoder")
}

// records decodes a {count, pad[3]} table of rec-byte records.
func (k blk) records(rec int64, one func(r int64) Obj) any {
	c, why := k.table(rec)
	if why != "" {
		return k.whole(why)
	}
	out := Obj{{"count", c}}
	list := make(Arr, 0, c) // c checked against the block's bytes
	for i := 0; i < c; i++ {
		list = append(list, one(tableHeader+int64(i)*rec))
	}
	out.add("records", list)
	if tail := tableHeader + int64(c)*rec; tail < k.n() {
		out.add("trailing", k.opaque(tail, k.n()-tail))
	}
	return out
}

// levelSettings: §3.2.
func (k blk) levelSettings() any {
	const first, plane = 0x5c, 0x20
	if k.n() < first+plane+4 {
		return k.whole(fmt.Sprintf("%d bytes, less than the %#x the settings and one chunk plane need", k.n(), first+plane+4))
	}
	o := Obj{{"background_colour", k.s32s(0, 3)}, {"fog_colour", k.s32s(0xc, 3)},
		{"fog_near_distance", k.f32(0x18)}, {"fog_far_distance", k.f32(0x1c)},
		{"fog_near_intensity", k.f32(0x20)}, {"fog_far_intensity", k.f32(0x24)},
		{"death_height", k.f32(0x28)}, {"is_spherical_world", k.s32(0x2c)},
		{"sphere_centre", k.vec(0x30, 3)}, {"ship_position", k.vec(0x3c, 3)},
		{"ship_rotation_z", k.f32(0x48)}, {"ship_path", k.s32(0x4c)},
		{"ship_camera_cuboid_start", k.s32(0x50)}, {"ship_camera_cuboid_end", k.s32(0x54)}, {"pad", k.u32(0x58)}}
	n := int64(k.s32(first + 0xc))
	if n <= 0 {
		n = 1
	}
	if need := n*plane + 4; need > k.n()-first {
		o.add("chunk_planes", k.undecoded(first, k.n()-first, fmt.Sprintf("%d chunk planes of %#x bytes and the core sounds count run past %s", n, plane, k.past(first, need))))
		return o
	}
	planes := make(Arr, 0, n)
	for i := int64(0); i < n; i++ {
		r := first + i*plane
		planes = append(planes, Obj{{"point", k.vec(r, 3)}, {"plane_count", k.s32(r + 0xc)}, {"normal", k.vec(r+0x10, 3)}, {"pad", k.u32(r + 0x1c)}})
	}
	o.add("chunk_planes", planes)
	end := first + n*plane
	o.add("core_sounds_count", k.s32(end))
	if end+4 < k.n() {
		o.add("trailing", k.opaque(end+4, k.n()-end-4))
	}
	return o
}

// classList: s32 count, count × s32 o_class.
func (k blk) classList() any {
	if k.n() < 4 {
		return k.whole("no room for the count")
	}
	c := int64(k.s32(0))
	if c < 0 || c*4 > k.n()-4 {
		return k.whole(fmt.Sprintf("%d classes of 4 bytes run past %s", c, k.past(4, c*4)))
	}
	return Obj{{"count", c}, {"o_class", k.s32s(4, int(c))}}
}

func (k blk) mobies() any {
	g := k.g
	if k.n() < tableHeader {
		return k.whole("less than the 0x10-byte header")
	}
	static, spawnable := int64(k.s32(0)), k.s32(4)
	o := Obj{{"static_count", static}, {"spawnable_moby_count", spawnable}, {"pad", k.s32s(8, 2)}}
	if static < 0 || static*MobyRecordSize > k.n()-tableHeader {
		o.add("records", k.undecoded(tableHeader, k.n()-tableHeader, fmt.Sprintf("%d records of %#x bytes run past %s", static, MobyRecordSize, k.past(tableHeader, static*MobyRecordSize))))
		return o
	}
	list := make(Arr, 0, static)
	g.Mobies = make([]MobyInstance, 0, static)
	for i := int64(0); i < static; i++ {
		r := tableHeader + i*MobyRecordSize
		if sz := k.s32(r); sz != MobyRecordSize {
			u := k.undecoded(r, MobyRecordSize, fmt.Sprintf("record %d: size field %#x, the layout's is %#x", i, sz, MobyRecordSize))
			list = append(list, Obj{{"index", i}, {"undecoded", u}})
			g.undecodedMobies++
			continue
		}
		m := MobyInstance{Index: int(i), Offset: k.off + r, Mission: k.s32(r + 4), UID: k.s32(r + 0x10), Bolts: k.s32(r + 0x14),
			OClass: k.s32(r + 0x28), Scale: k.f32(r + 0x2c), DrawDistance: k.s32(r + 0x30), UpdateDistance: k.s32(r + 0x34),
			Position: [3]float32{k.f32(r + 0x40), k.f32(r + 0x44), k.f32(r + 0x48)},
			Rotation: [3]float32{k.f32(r + 0x4c), k.f32(r + 0x50), k.f32(r + 0x54)},
			Group:    k.s32(r + 0x58), IsRooted: k.s32(r + 0x5c), RootedDistance: k.f32(r + 0x60), PvarIndex: k.s32(r + 0x68),
			Occlusion: k.s32(r + 0x6c), ModeBits: k.s32(r + 0x70), LightColour: [3]int32{k.s32(r + 0x74), k.s32(r + 0x78), k.s32(r + 0x7c)},
			Light: k.s32(r + 0x80), raw: k.d[r : r+MobyRecordSize]}
		g.Mobies = append(g.Mobies, m)
		if g.docless {
			continue
		}
		list = append(list, Obj{{"index", i}, {"uid", m.UID}, {"o_class", m.OClass},
			{"position", k.vec(r+0x40, 3)}, {"rotation", k.vec(r+0x4c, 3)}, {"scale", m.Scale},
			{"group", m.Group}, {"pvar_index", m.PvarIndex}, {"pvar", g.pvarOf(k, r+0x68)},
			{"size", k.s32(r)}, {"mission", m.Mission}, {"unknown_8", k.s32(r + 8)}, {"unknown_c", k.s32(r + 0xc)},
			{"bolts", m.Bolts}, {"unknown_18", k.s32s(r+0x18, 4)}, {"draw_distance", m.DrawDistance},
			{"update_distance", m.UpdateDistance}, {"unknown_38", k.s32(r + 0x38)}, {"unknown_3c", k.s32(r + 0x3c)},
			{"is_rooted", m.IsRooted}, {"rooted_distance", m.RootedDistance}, {"unknown_64", k.s32(r + 0x64)},
			{"occlusion", m.Occlusion}, {"mode_bits", m.ModeBits}, {"light_colour", k.s32s(r+0x74, 3)},
			{"light", m.Light}, {"unknown_84", k.s32(r + 0x84)}})
	}
	o.add("records", list)
	if tail := tableHeader + static*MobyRecordSize; tail < k.n() {
		o.add("trailing", k.opaque(tail, k.n()-tail))
	}
	return o
}

func (k blk) ties() any {
	g := k.g
	c, why := k.table(TieRecordSize)
	if why != "" {
		return k.whole(why)
	}
	g.Ties = make([]TieInstance, 0, c)
	return k.records(TieRecordSize, func(r int64) Obj {
		t := TieInstance{Index: len(g.Ties), Offset: k.off + r, OClass: k.s32(r), DrawDistance: k.s32(r + 4), OcclusionIndex: k.s32(r + 0xc),
			DirectionalLights: k.s32(r + 0x50), UID: k.s32(r + 0x54)}
		for i := range t.Matrix {
			t.Matrix[i] = k.f32(r + 0x10 + 4*int64(i))
		}
		g.Ties = append(g.Ties, t)
		if g.docless {
			return nil
		}
		return Obj{{"index", t.Index}, {"uid", t.UID}, {"o_class", t.OClass}, {"matrix", k.vec(r+0x10, 16)},
			{"draw_distance", t.DrawDistance}, {"pad_08", k.s32(r + 8)}, {"occlusion_index", t.OcclusionIndex},
			{"directional_lights", t.DirectionalLights}, {"pad_58", k.s32s(r+0x58, 2)}}
	})
}

func (k blk) shrubs() any {
	g := k.g
	c, why := k.table(ShrubRecordSize)
	if why != "" {
		return k.whole(why)
	}
	g.Shrubs = make([]ShrubInstance, 0, c)
	return k.records(ShrubRecordSize, func(r int64) Obj {
		s := ShrubInstance{Index: len(g.Shrubs), Offset: k.off + r, OClass: k.s32(r), DrawDistance: k.f32(r + 4),
			Colour: [3]int32{k.s32(r + 0x50), k.s32(r + 0x54), k.s32(r + 0x58)}, DirLights: k.s32(r + 0x60)}
		for i := range s.Matrix {
			s.Matrix[i] = k.f32(r + 0x10 + 4*int64(i))
		}
		g.Shrubs = append(g.Shrubs, s)
		if g.docless {
			return nil
		}
		return Obj{{"index", s.Index}, {"o_class", s.OClass}, {"matrix", k.vec(r+0x10, 16)}, {"draw_distance", s.DrawDistance},
			{"unused_08", k.s32s(r+8, 2)}, {"colour", k.s32s(r+0x50, 3)}, {"unused_5c", k.s32(r + 0x5c)},
			{"dir_lights", s.DirLights}, {"unused_64", k.s32s(r+0x64, 3)}}
	})
}

// groups: {group_count, data_size, pad[2]}, pointers at 0x10, u16 members
// at 0x10 + 4·group_count rounded up to 0x10; bit 15 ends a group.
func (k blk) groups(instances int) any {
	if k.n() < tableHeader {
		return k.whole("less than the 0x10-byte header")
	}
	gc, size := int64(k.s32(0)), int64(k.s32(4))
	if gc < 0 || gc*4 > k.n()-tableHeader {
		return k.whole(fmt.Sprintf("%d group pointers run past %s", gc, k.past(tableHeader, gc*4)))
	}
	data := (tableHeader + 4*gc + 15) &^ 15
	if size < 0 || data > k.n() || size > k.n()-data {
		return k.whole(fmt.Sprintf("%d bytes of member data at %#x run past %s", size, data, k.past(data, size)))
	}
	o := Obj{{"group_count", gc}, {"data_size", size}}
	list := make(Arr, 0, gc)
	for i := int64(0); i < gc; i++ {
		p := int64(k.s32(tableHeader + 4*i))
		if p < 0 {
			list = append(list, Obj{{"index", i}, {"pointer", p}, {"members", Arr{}}})
			continue
		}
		var members Arr
		why := ""
		start := data + p
		at := start
		for {
			if at+2 > data+size {
				why = fmt.Sprintf("group %d: no last member (bit 15) before the member data ends", i)
				break
			}
			v := k.u16(at)
			at += 2
			idx := int(v & 0x7fff)
			if idx >= instances {
				why = fmt.Sprintf("group %d: member %d past the %d instances", i, idx, instances)
				break
			}
			members = append(members, idx) // bounded: one a 2 bytes of checked member data
			if v&0x8000 != 0 {
				break
			}
		}
		if why != "" {
			list = append(list, Obj{{"index", i}, {"pointer", p}, {"undecoded", k.undecoded(min(start, k.n()), at-min(start, k.n()), why)}})
			continue
		}
		if members == nil {
			members = Arr{}
		}
		list = append(list, Obj{{"index", i}, {"pointer", p}, {"members", members}})
	}
	o.add("groups", list)
	return o
}

// help: {s32 count, s32 size}, count × 0x10 records, NUL-terminated strings
// at block-relative offsets.
func (k blk) help() any {
	if k.n() < 8 {
		return k.whole("less than the 8-byte header")
	}
	c, size := int64(k.s32(0)), int64(k.s32(4))
	if c < 0 || c*0x10 > k.n()-8 {
		return k.whole(fmt.Sprintf("%d messages of 0x10 bytes run past %s", c, k.past(8, c*0x10)))
	}
	lim := k.n()
	if size >= 8+c*0x10 && size <= k.n() {
		lim = size
	}
	o := Obj{{"count", c}, {"size", size}}
	list := make(Arr, 0, c)
	for i := int64(0); i < c; i++ {
		r := 8 + i*0x10
		m := Obj{{"offset", k.s32(r)}, {"id", k.s16(r + 4)}, {"short_id", k.s16(r + 6)}, {"third_person_id", k.s16(r + 8)},
			{"coop_id", k.s16(r + 0xa)}, {"vag", k.s16(r + 0xc)}, {"character", k.s16(r + 0xe)}}
		so := int64(k.s32(r))
		switch {
		case so == 0:
			m.add("text", nil)
		case so < 8+c*0x10 || so >= lim:
			m.add("text", k.undecoded(r, 4, fmt.Sprintf("message %d: string offset %#x outside the strings (%#x..%#x)", i, so, 8+c*0x10, lim)))
		default:
			end := bytes.IndexByte(k.d[so:lim], 0)
			if end < 0 {
				m.add("text", k.undecoded(so, lim-so, fmt.Sprintf("message %d: string at %#x has no terminator before %s", i, so, map[bool]string{true: "the block's size", false: "the next block"}[lim == size])))
				break
			}
			s := k.d[so : so+int64(end)]
			m.add("text", Text(s))
			if !utf8.Valid(s) {
				m.add("text_hex", hexString(s))
			}
		}
		list = append(list, m)
	}
	o.add("messages", list)
	return o
}

func (k blk) sharedData() any {
	if k.n() < tableHeader {
		return k.whole("less than the 0x10-byte header")
	}
	size, pc := int64(k.s32(0)), int64(k.s32(4))
	if size < 0 || size > k.n()-tableHeader {
		return k.whole(fmt.Sprintf("%d bytes of data run past %s", size, k.past(tableHeader, size)))
	}
	pt := tableHeader + size
	if pc < 0 || pc*8 > k.n()-pt {
		return k.whole(fmt.Sprintf("%d pointers of 8 bytes run past %s", pc, k.past(pt, pc*8)))
	}
	ptrs := make(Arr, 0, pc)
	for i := int64(0); i < pc; i++ {
		r := pt + 8*i
		ptrs = append(ptrs, Obj{{"pvar_index", k.u16(r)}, {"pointer_offset", k.u16(r + 2)}, {"shared_data_offset", k.s32(r + 4)}})
	}
	return Obj{{"data_size", size}, {"pointer_count", pc}, {"pad", k.s32s(8, 2)}, {"data", k.opaque(tableHeader, size)}, {"pointers", ptrs}}
}

// pairs: {s32 pvar_index, u32 offset} until pvar_index < 0.
func (k blk) pairs() any {
	var list Arr
	for r := int64(0); ; r += 8 {
		if r+8 > k.n() {
			return k.whole(fmt.Sprintf("no terminating pair (pvar_index < 0) before %s", k.past(r, 8)))
		}
		pi := k.s32(r)
		if pi < 0 {
			return Obj{{"pairs", append(Arr{}, list...)}, {"terminator", Obj{{"pvar_index", pi}, {"offset", k.u32(r + 4)}}}}
		}
		if k.g.pvarOK && int(pi) >= len(k.g.pvars) {
			list = append(list, Obj{{"pvar_index", pi}, {"offset", k.u32(r + 4)}, {"undecoded", k.undecoded(r, 8, fmt.Sprintf("pvar index %d past the %d-entry table", pi, len(k.g.pvars)))}})
			continue
		}
		list = append(list, Obj{{"pvar_index", pi}, {"offset", k.u32(r + 4)}})
	}
}

func (k blk) paths(grind bool) any {
	if k.n() < tableHeader {
		return k.whole("less than the 0x10-byte header")
	}
	n, doff, dsize := int64(k.s32(0)), int64(k.s32(4)), int64(k.s32(8))
	o := Obj{{"spline_count", n}, {"data_offset", doff}, {"data_size", dsize}, {"pad", k.s32(0xc)}}
	at := int64(tableHeader)
	if grind {
		if n < 0 || n*0x20 > k.n()-at {
			return k.whole(fmt.Sprintf("%d grind path records of 0x20 bytes run past %s", n, k.past(at, n*0x20)))
		}
		recs := make(Arr, 0, n)
		for i := int64(0); i < n; i++ {
			r := at + 0x20*i
			recs = append(recs, Obj{{"bounding_sphere", k.vec(r, 4)}, {"unknown", k.s32(r + 0x10)}, {"wrap", k.s32(r + 0x14)}, {"inactive", k.s32(r + 0x18)}, {"pad", k.s32(r + 0x1c)}})
		}
		o.add("grind_paths", recs)
		at += 0x20 * n
	}
	if n < 0 || n*4 > k.n()-at {
		return k.whole(fmt.Sprintf("%d spline offsets run past %s", n, k.past(at, n*4)))
	}
	splines := make(Arr, 0, n)
	for i := int64(0); i < n; i++ {
		so := doff + int64(k.s32(at+4*i))
		if !k.has(so, 0x10) {
			splines = append(splines, k.undecoded(at+4*i, 4, fmt.Sprintf("spline %d at %#x lies outside the block", i, so)))
			continue
		}
		c := int64(k.s32(so))
		if c < 0 || c*0x10 > k.n()-so-0x10 {
			splines = append(splines, k.undecoded(so, 0x10, fmt.Sprintf("spline %d: %d points of 0x10 bytes run past %s", i, c, k.past(so+0x10, c*0x10))))
			continue
		}
		pts := make(Arr, 0, c)
		for j := int64(0); j < c; j++ {
			pts = append(pts, k.vec(so+0x10+0x10*j, 4))
		}
		splines = append(splines, Obj{{"offset", so}, {"points", pts}})
	}
	o.add("splines", splines)
	return o
}

func (k blk) pointLights() any {
	const masks, lights = 0x800, tableHeader + 0x800
	if k.n() < lights {
		return k.whole(fmt.Sprintf("%d bytes, less than the %#x the header and cull masks need", k.n(), lights))
	}
	c := int64(k.s32(0))
	if c < 0 || c > maxPointLights || c*0x10 > k.n()-lights {
		return k.whole(fmt.Sprintf("%d lights (at most %d) of 0x10 bytes run past %s or the limit", c, maxPointLights, k.past(lights, c*0x10)))
	}
	list := make(Arr, 0, c)
	for i := int64(0); i < c; i++ {
		r := lights + 0x10*i
		list = append(list, Obj{{"position", Arr{float32(k.u16(r)) / 64, float32(k.u16(r+2)) / 64, float32(k.u16(r+4)) / 64}},
			{"radius", float32(k.u16(r+6)) / 64},
			{"colour", Arr{float32(k.u16(r+8)) / 65535, float32(k.u16(r+0xa)) / 65535, float32(k.u16(r+0xc)) / 65535}},
			{"unused", k.u16(r + 0xe)}})
	}
	return Obj{{"count", c}, {"cull_masks", k.opaque(tableHeader, masks)}, {"lights", list}}
}

func (k blk) envTransitions() any {
	if k.n() < tableHeader {
		return k.whole("less than the 0x10-byte header")
	}
	c := int64(k.s32(0))
	if c < 0 || c*0x90 > k.n()-tableHeader {
		return k.whole(fmt.Sprintf("%d transitions (0x10 + 0x80 bytes each) run past %s", c, k.past(tableHeader, c*0x90)))
	}
	list := make(Arr, 0, c)
	for i := int64(0); i < c; i++ {
		r := tableHeader + 0x10*c + 0x80*i
		list = append(list, Obj{{"bounding_sphere", k.vec(tableHeader+0x10*i, 4)}, {"inverse_matrix", k.vec(r, 16)},
			{"hero_colour_1", k.u8s(r+0x40, 4)}, {"hero_colour_2", k.u8s(r+0x44, 4)},
			{"hero_light_1", k.s32(r + 0x48)}, {"hero_light_2", k.s32(r + 0x4c)}, {"flags", k.u32(r + 0x50)},
			{"fog_colour_1", k.u8s(r+0x54, 4)}, {"fog_colour_2", k.u8s(r+0x58, 4)},
			{"fog_1", k.vec(r+0x5c, 4)}, {"fog_2", k.vec(r+0x6c, 4)}, {"unused", k.s32(r + 0x7c)}})
	}
	return Obj{{"count", c}, {"transitions", list}}
}

func (k blk) cameraGrid() any {
	const lists = tableHeader + 4*gridCells
	if k.n() < lists {
		return k.whole(fmt.Sprintf("%d bytes, less than the %#x the grid needs", k.n(), lists))
	}
	var cells Arr
	for i := int64(0); i < gridCells; i++ {
		lo := int64(k.s32(tableHeader + 4*i))
		if lo == 0 {
			continue
		}
		at := tableHeader + lo
		cell := Obj{{"x", i % 64}, {"y", i / 64}, {"offset", lo}}
		if !k.has(at, 0x10) {
			cell.add("undecoded", k.undecoded(tableHeader+4*i, 4, fmt.Sprintf("cell %d: list at %#x lies outside the block", i, at)))
			cells = append(cells, cell)
			continue
		}
		c := int64(k.s32(at))
		if c < 0 || c*0x30 > k.n()-at-0x10 {
			cell.add("undecoded", k.undecoded(at, 0x10, fmt.Sprintf("cell %d: %d volumes of 0x30 bytes run past %s", i, c, k.past(at+0x10, c*0x30))))
			cells = append(cells, cell)
			continue
		}
		vols := make(Arr, 0, c)
		for j := int64(0); j < c; j++ {
			r := at + 0x10 + 0x30*j
			vols = append(vols, Obj{{"bounding_sphere", k.vec(r, 4)}, {"type", k.s32(r + 0x10)}, {"index", k.s32(r + 0x14)},
				{"flags", k.s32(r + 0x18)}, {"i_value", k.s32(r + 0x1c)}, {"f_value", k.f32(r + 0x20)}})
		}
		cell.add("volumes", vols)
		cells = append(cells, cell)
	}
	if cells == nil {
		cells = Arr{}
	}
	return Obj{{"header", k.opaque(0, tableHeader)}, {"cells", cells}}
}

func (k blk) occlusionMappings() any {
	if k.n() < tableHeader {
		return k.whole("less than the 0x10-byte header")
	}
	t, ti, m := int64(k.s32(0)), int64(k.s32(4)), int64(k.s32(8))
	sum := t + ti + m
	if t < 0 || ti < 0 || m < 0 || sum*8 > k.n()-tableHeader {
		return k.whole(fmt.Sprintf("%d mappings of 8 bytes run past %s", sum, k.past(tableHeader, sum*8)))
	}
	return Obj{{"tfrag_count", t}, {"tie_count", ti}, {"moby_count", m}, {"pad", k.s32(0xc)}, {"mappings", k.opaque(tableHeader, sum*8)}}
}

func (k blk) tieAmbient() any {
	var list Arr
	for r := int64(0); ; {
		if r+4 > k.n() {
			return k.whole(fmt.Sprintf("no terminator (tie_index -1) before %s", k.past(r, 4)))
		}
		ti, n := k.s16(r), int64(k.s16(r+2))
		if ti == -1 {
			return Obj{{"entries", append(Arr{}, list...)}}
		}
		if n < 0 || 2*n > k.n()-r-4 {
			return k.whole(fmt.Sprintf("tie %d: %d colour bytes at %#x run past %s", ti, 2*n, r+4, k.past(r+4, 2*n)))
		}
		list = append(list, Obj{{"tie_index", ti}, {"n", n}, {"data", hexString(k.d[r+4 : r+4+2*n])}})
		r += 4 + 2*n
	}
}

func (k blk) areas() any {
	const base = 4
	if k.n() < base+0x20 {
		return k.whole("less than the 0x24 bytes of size and area header")
	}
	size := k.s32(0)
	c := int64(k.s32(base))
	if c < 0 || c*0x30 > k.n()-base-0x20 {
		return k.whole(fmt.Sprintf("%d areas of 0x30 bytes run past %s", c, k.past(base+0x20, c*0x30)))
	}
	var partOffs [5]int64
	for p := range partOffs {
		partOffs[p] = int64(k.s32(base + 4 + 4*int64(p)))
	}
	parts := [5]string{"paths", "cuboids", "spheres", "cylinders", "negative_cuboids"}
	list := make(Arr, 0, c)
	for i := int64(0); i < c; i++ {
		r := base + 0x20 + 0x30*i
		a := Obj{{"bounding_sphere", k.vec(r, 4)}, {"last_update_time", k.s16(r + 0x1a)}}
		links := Obj{}
		for p := range parts {
			n := int64(k.s16(r + 0x10 + 2*int64(p)))
			lo := base + partOffs[p] + int64(k.s32(r+0x1c+4*int64(p)))
			if n == 0 {
				links.add(parts[p], Arr{})
				continue
			}
			if n < 0 || !k.has(lo, 4*n) {
				links.add(parts[p], k.undecoded(r+0x10+2*int64(p), 2, fmt.Sprintf("area %d: %d %s links at %#x run outside the block", i, n, parts[p], lo)))
				continue
			}
			links.add(parts[p], k.s32s(lo, int(n)))
		}
		a.add("links", links)
		list = append(list, a)
	}
	return Obj{{"size", size}, {"area_count", c}, {"part_offsets", k.s32s(base+4, 5)}, {"unused", k.s32s(base+0x18, 2)}, {"areas", list}}
}
