// SPDX-License-Identifier: GPL-2.0
// expect: E0061
//! A netdev's name changes under RTNL (`dev_change_name()` asserts it): reading it takes the
//! proof that RTNL is held.
use kernel::rdma::netdev::UlpNetdevRef;

/// What the type refuses.
pub fn name_without_rtnl(nd: &UlpNetdevRef) -> usize {
    nd.name().len()
}
