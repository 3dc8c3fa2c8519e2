#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The JSON shapes of the account actions (SignUp and its confirmation,
/// ForgotPassword and its confirmation, ChangePassword).
extension CognitoWire {
    /// The shared shape of the unauthenticated account actions (SignUp,
    /// ConfirmSignUp, ResendConfirmationCode, ForgotPassword,
    /// ConfirmForgotPassword); absent fields are not sent.
    struct AccountRequest: Encodable {
        var clientId: String
        var username: String
        var secretHash: String?
        var password: String? = nil
        var confirmationCode: String? = nil
        var userAttributes: [UserAttribute]? = nil
    }

    struct SignUpResponse: Decodable {
        var userConfirmed: Bool?, userSub: String?
        var codeDeliveryDetails: CodeDeliveryDetails?
    }

    struct DeliveryResponse: Decodable {
        var codeDeliveryDetails: CodeDeliveryDetails?
    }

    struct CodeDeliveryDetails: Decodable {
        var destination: String?, deliveryMedium: String?, attributeName: String?

        var delivery: CodeDelivery { CodeDelivery(destination: destination, medium: deliveryMedium, attributeName: attributeName) }
    }

    struct ChangePasswordRequest: Encodable {
        var accessToken: String
        var previousPassword: String
        var proposedPassword: String
    }
}
