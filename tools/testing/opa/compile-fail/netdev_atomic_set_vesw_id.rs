// SPDX-License-Identifier: GPL-2.0
// expect: E0599
//! The ULP's atomic callbacks (`xmit`, `rx_mode_changed`) get a `UlpNetdevAtomic`, which
//! lacks the methods that sleep: `set_vesw_id` (hfi1's `set_id` takes a mutex) is only on
//! `UlpNetdevRef`, which process-context callbacks get.
use kernel::rdma::netdev::UlpNetdevAtomic;

/// What the type refuses.
pub fn set_vesw_id_in_atomic_context(nd: &UlpNetdevAtomic) {
    nd.set_vesw_id(1);
}
