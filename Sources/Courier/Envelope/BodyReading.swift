import Foundation

/// What the client read of an answer's body with one decoder, kept with the answer so that it
/// reads the body once: the ``EnvelopeView`` its layers and checks share, and an envelope a layer
/// had decoded for the endpoint ahead of the endpoint's decoding, which that decoding takes.
///
/// An answer's copies share it until one of them changes its body (which starts a reading of
/// its own).
struct BodyReading: Sendable {
    /// The decoder that read; another decoder reads for itself.
    let decoder: JSONDecoder
    /// The view, once read.
    var view: EnvelopeView?
    /// The envelope decoded ahead: the `BaseModel` type it was decoded as, and the outcome.
    var ahead: (type: ObjectIdentifier, outcome: Result<any Sendable, NetworkError>)?
}

extension HTTPResponse {
    /// The envelope view of the body as `decoder` reads it: read the first time it is asked for
    /// (or in the same pass as an envelope a layer had decoded ahead), then kept with the answer.
    package func envelope(_ decoder: JSONDecoder) -> EnvelopeView {
        if let view = envelopeIfRead(decoder) { return view }
        let view = EnvelopeView.read(body, with: decoder)
        bodyReading.withLock { reading in
            if reading?.decoder !== decoder { reading = BodyReading(decoder: decoder) }
            reading?.view = view
        }
        return view
    }

    /// The envelope view as `decoder` read it already, or `nil` when nobody asked yet.
    package func envelopeIfRead(_ decoder: JSONDecoder) -> EnvelopeView? {
        bodyReading.withLock { reading in reading?.decoder === decoder ? reading?.view : nil }
    }

    /// The body as an envelope of `T` decoded with `decoder`, or as a layer had it decoded
    /// already (see ``decodeAhead(_:by:)``).
    /// - Throws: ``NetworkError/Code/decodingFailed``, as ``decodeJSON(_:from:_:)`` does.
    func envelope<T>(_ type: BaseModel<T>.Type, by decoder: JSONDecoder) throws(NetworkError) -> BaseModel<T> {
        let taken: Result<BaseModel<T>, NetworkError>? = bodyReading.withLock { reading in
            guard reading?.decoder === decoder, let ahead = reading?.ahead, ahead.type == ObjectIdentifier(type)
            else { return nil }
            reading?.ahead = nil
            switch ahead.outcome {
            case .success(let envelope as BaseModel<T>): return .success(envelope)
            case .failure(let error): return .failure(error)
            case .success: return nil
            }
        }
        if let taken { return try taken.get() }
        return try decodeJSON(type, from: body, decoder)
    }

    /// Decodes the body as an envelope of `T` with `decoder`, and its view in the same pass,
    /// before the endpoint's decoding asks, for a layer that needs the code: the decoding then
    /// takes the envelope (``envelope(_:by:)``), so the body is read once for both.
    /// Nothing is done when the body is empty or larger than a view reads
    /// (``EnvelopeView/largestBody``), when `decoder` read it already, or when another decoder
    /// did.
    func decodeAhead<T>(_ type: BaseModel<T>.Type, by decoder: JSONDecoder) {
        guard EnvelopeView.reads(body),
            bodyReading.withLock({ $0 == nil || ($0?.decoder === decoder && $0?.view == nil && $0?.ahead == nil) })
        else { return }
        let (outcome, view) = decodedWithView(type, by: decoder)
        bodyReading.withLock { reading in
            if reading == nil { reading = BodyReading(decoder: decoder) }
            guard reading?.decoder === decoder, reading?.ahead == nil else { return }
            reading?.ahead = (ObjectIdentifier(type), outcome.map { $0 })
            if reading?.view == nil { reading?.view = view }
        }
    }

    /// Drops an envelope decoded ahead that no decoding took (its caller left, or wanted
    /// another type).
    func forgetDecodedAhead() {
        bodyReading.withLock { $0?.ahead = nil }
    }

    /// The body as an envelope of `T`, and its view, from one pass of `decoder`.
    private func decodedWithView<T>(_ type: BaseModel<T>.Type, by decoder: JSONDecoder) -> (
        Result<BaseModel<T>, NetworkError>, EnvelopeView
    ) {
        do {
            let both = try decoder.decode(EnvelopeAndView<T>.self, from: JSONBytes.forDecoding(body, with: decoder))
            return (both.envelope.mapError { decodingFailure($0, decoding: type, body: body) }, both.view)
        } catch {
            // Not JSON at all: nothing for the view either.
            return (.failure(decodingFailure(error, decoding: type, body: body)), EnvelopeView.empty(for: decoder))
        }
    }
}

/// An envelope of `T` and the view of the same body, decoded in one pass: each on its own, so
/// an envelope that does not decode still leaves its view.
private struct EnvelopeAndView<T: Decodable & Sendable>: Decodable {
    let envelope: Result<BaseModel<T>, any Error>
    let view: EnvelopeView

    init(from decoder: any Decoder) throws {
        envelope = Result { try BaseModel<T>(from: decoder) }
        view = EnvelopeView(from: decoder)
    }
}
