/// COG_CRED_DEBUG's one rule: on when set to anything but empty or "0".
/// The front hands such a request to cog-cred-cli, whose trace it is.
public enum DebugSwitch {
    public static let variable = "COG_CRED_DEBUG"

    public static func isOn(_ value: String?) -> Bool {
        guard let value else { return false }
        return !value.isEmpty && value != "0"
    }
}
