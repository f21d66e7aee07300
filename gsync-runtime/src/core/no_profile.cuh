// ---- per-phase profile: off ---------------------------------------------------------
// The kernel records no profile: its profile hooks are empty (profile.cuh has the recording).
#define GSYNC_PROFILE_PARAMETERS
#define GSYNC_PROFILE_BEGIN()
#define GSYNC_PROFILE_ARRIVE()
#define GSYNC_PROFILE_LEAVE()
#define GSYNC_PROFILE_END()
#define GSYNC_PROFILE_EXIT()
// ---- end of per-phase profile -------------------------------------------------------
