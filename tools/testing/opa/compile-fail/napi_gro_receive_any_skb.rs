// SPDX-License-Identifier: GPL-2.0
// expect: E0624
//! A driver cannot hand GRO any buffer in any NAPI context: GRO reads the buffer's device
//! (null crashes) and keeps it across polls (its device must outlive the context). Frames go
//! to GRO through the `VnicRx` of a VNIC netdev's own context, which sets the device.
use kernel::net::{napi::NapiCtx, skbuff::SkBuff};

/// What the type refuses.
pub fn any_buffer_to_gro(ctx: &NapiCtx<'_>, skb: SkBuff) {
    ctx.gro_receive(skb);
}
