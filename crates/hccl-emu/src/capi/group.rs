//! Groups of calls.

use super::*;
use crate::group;

hccl! {
    /// `HcclGroupStart`: calls up to the matching `HcclGroupEnd` are captured.
    fn HcclGroupStart() {
        group::start();
        Ok(())
    }
}

hccl! {
    /// `HcclGroupEnd`: E_NOT_SUPPORT without a start; the outermost end runs the captured calls
    /// and succeeds (their failures are messages).
    fn HcclGroupEnd() {
        group::end()
    }
}
