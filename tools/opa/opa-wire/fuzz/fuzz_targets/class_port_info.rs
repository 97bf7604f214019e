// SPDX-License-Identifier: GPL-2.0
#![no_main]

//! The decoder of ClassPortInfo: see [`opa_wire_fuzz::fixed_size_target`].

opa_wire_fuzz::fixed_size_target!(opa_wire::vema_info::ClassPortInfo);
