// The read side (config, JWT claims, the Secret Service, protocol renderers)
// is part of what this library offers: users of CogCredWrite get it too.
@_exported import CogCredRead
