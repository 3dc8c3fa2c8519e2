#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The JSON shapes of the MFA actions (AssociateSoftwareToken,
/// VerifySoftwareToken, GetUser, SetUserMFAPreference).
extension CognitoWire {
    struct AssociateSoftwareTokenResponse: Decodable {
        var secretCode: String?
        var session: String?
    }

    struct VerifySoftwareTokenRequest: Encodable {
        var session: String? = nil
        var accessToken: String? = nil
        var userCode: String
        var friendlyDeviceName: String
    }

    struct VerifySoftwareTokenResponse: Decodable {
        var status: String?
        var session: String?

        /// Status SUCCESS (or none, as some emulators answer).
        var succeeded: Bool { status == nil || status == "SUCCESS" }
    }

    struct GetUserResponse: Decodable {
        var userMFASettingList: [String]?
        var preferredMfaSetting: String?

        var settings: MFASettings {
            MFASettings(
                enabled: (userMFASettingList ?? []).compactMap(CognitoWire.mfaKind(named:)),
                preferred: preferredMfaSetting.flatMap(CognitoWire.mfaKind(named:)))
        }
    }

    struct SetUserMFAPreferenceRequest: Encodable {
        struct Setting: Encodable {
            var enabled: Bool
            var preferredMfa: Bool
        }

        var accessToken: String
        var sms: Setting?
        var totp: Setting?
        var email: Setting?

        init(accessToken: String, _ settings: [MFAKind: MFAPreference]) {
            self.accessToken = accessToken
            let setting = { (kind: MFAKind) in settings[kind].map { Setting(enabled: $0.enabled, preferredMfa: $0.preferred) } }
            sms = setting(.sms)
            totp = setting(.totp)
            email = setting(.email)
        }

        enum CodingKeys: String, CodingKey {
            case accessToken
            case sms = "SMSMfaSettings"
            case totp = "SoftwareTokenMfaSettings"
            case email = "EmailMfaSettings"
        }
    }
}
